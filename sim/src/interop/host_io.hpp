// Host-side I/O of srnic-interop: the Ethernet frame connection to qemu (-netdev stream on a
// unix socket: a byte stream, each frame preceded by its length as a 4-byte big-endian number,
// no FCS, no minimum-size padding), the QMP control connection used to stop and resume the
// guest, and the TCP connection of the peer tool's out-of-band setup exchange. Every failure
// throws std::runtime_error with a one-line message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace srnic::sim::interop {

// Wall-clock seconds since an arbitrary start (steady clock).
double wall_s();

// Client of qemu's "-netdev stream,server=on" unix socket. A byte stream loses nothing in the
// socket itself: when one side stops reading, the other side's writes wait. What can lose a
// frame is qemu: it hands each frame it reads to the guest's virtio NIC at once or, when the
// NIC has no free receive buffer (or the VM is stopped), keeps it in a queue that it empties
// ("purges") when the VM stops. So frames towards qemu are written one at a time, the next only
// once qemu has read the previous one (the socket's unread byte count, SIOCOUTQ, is zero):
// qemu reads a frame only after the one before it left its queue, so at most the last frame
// read can be queued. delivered() confirms the last real frame with a sentinel frame that the
// guest's NIC filters out (unused unicast MAC and EtherType): once qemu has read the sentinel,
// every frame before it is in the guest's receive ring, and a stop can lose at most the
// sentinel. Reads never block.
class FrameSocket {
 public:
  // Connects to path, retrying for connect_timeout_s while qemu is not listening yet.
  explicit FrameSocket(const std::string& path, double connect_timeout_s = 30);
  ~FrameSocket();
  FrameSocket(const FrameSocket&) = delete;
  FrameSocket& operator=(const FrameSocket&) = delete;

  int fd() const { return fd_; }
  // Moves every byte qemu has written into the receive buffer; true if any arrived.
  bool drain();
  // Next complete received frame (drains first), false if none is waiting.
  bool receive(std::vector<uint8_t>& out);
  // Queues a frame for qemu and writes it when qemu has read everything before it.
  void send(const uint8_t* data, size_t len);
  // Writes the next queued frame if qemu has read the previous one (and, with confirm, the
  // sentinel after the last one); true when every frame is written and read by qemu.
  bool flush(bool confirm = false);
  // True when qemu has read every frame and, behind the last one, a sentinel: nothing of ours
  // can be in qemu's queue except that sentinel.
  bool delivered();
  // Frames queued here, not yet written.
  bool backlog() const { return !outq_.empty(); }
  uint64_t frames_in() const { return in_; }
  uint64_t frames_out() const { return out_; }
  uint64_t sentinels() const { return sentinels_; }

 private:
  size_t unread() const;  // bytes written that qemu has not read yet
  void write_frame(const std::vector<uint8_t>& f);
  int fd_ = -1;
  std::string path_;
  std::vector<uint8_t> inq_;          // bytes received
  size_t in_off_ = 0;                 // consumed prefix of inq_
  std::deque<std::vector<uint8_t>> outq_;  // frames not yet written
  bool unconfirmed_ = false;          // a real frame was written after the last sentinel
  uint64_t in_ = 0, out_ = 0, sentinels_ = 0;
};

// QMP client (qemu -qmp unix:PATH,server=on,wait=off): stop / cont of the guest's vCPUs and
// virtual clock. The guest is resumed when the object is destroyed.
class Qmp {
 public:
  // on_side() is called before each command is sent and, while the command waits for its
  // reply, whenever `side_fd` (if >= 0) is readable (the frame socket stays drained).
  explicit Qmp(const std::string& path, double connect_timeout_s = 30, int side_fd = -1,
               std::function<void()> on_side = {});
  ~Qmp();
  Qmp(const Qmp&) = delete;
  Qmp& operator=(const Qmp&) = delete;

  void stop();  // no-op when already stopped
  void cont();  // no-op when already running
  bool running() const { return running_; }
  uint64_t stops() const { return stops_; }
  // Wall seconds the guest has been running since this connection was made.
  double run_s() const;

 private:
  void command(const char* name);
  std::string line();
  int fd_ = -1;
  int side_fd_ = -1;
  std::function<void()> on_side_;
  std::string buf_;
  bool running_ = true;
  uint64_t stops_ = 0;
  double t_cont_ = 0, run_s_ = 0;
};

// One TCP connection (non-blocking reads into a buffer, blocking writes).
class TcpConn {
 public:
  TcpConn() = default;
  explicit TcpConn(int fd) : fd_(fd) {}
  ~TcpConn();
  TcpConn(TcpConn&& o) noexcept : fd_(o.fd_), buf_(std::move(o.buf_)), eof_(o.eof_) { o.fd_ = -1; }
  TcpConn& operator=(TcpConn&& o) noexcept;

  // Connects to host:port (numeric IPv4); false if refused.
  static bool connect_to(const std::string& host, uint16_t port, TcpConn& out);
  bool open() const { return fd_ >= 0; }
  void write_all(const void* data, size_t len);
  // Reads what is available; true once at least n bytes are buffered (then moves exactly n
  // into out). A close by the peer before that sets closed().
  bool try_read(size_t n, std::string& out);
  bool closed() const { return eof_; }
  void close();

 private:
  void fill();
  int fd_ = -1;
  std::string buf_;
  bool eof_ = false;
};

// Listening TCP socket on 127.0.0.1:port (port 0: any); accept is non-blocking.
class TcpListener {
 public:
  explicit TcpListener(uint16_t port);
  ~TcpListener();
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;
  uint16_t port() const { return port_; }
  bool try_accept(TcpConn& out);

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

}  // namespace srnic::sim::interop
