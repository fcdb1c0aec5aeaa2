// Host-side I/O of srnic-interop: the Ethernet frame socket shared with qemu (-netdev dgram,
// unix datagrams, one frame per datagram, no FCS, no minimum-size padding), the QMP control
// connection used to stop and resume the guest, and the TCP connection of the peer tool's
// out-of-band setup exchange. Every failure throws std::runtime_error with a one-line message.
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

// Unix datagram socket bound to local_path, sending to guest_path (qemu's local.path).
// Sends never block: frames wait in a queue while qemu's receive queue is full.
class FrameSocket {
 public:
  FrameSocket(const std::string& local_path, const std::string& guest_path);
  ~FrameSocket();
  FrameSocket(const FrameSocket&) = delete;
  FrameSocket& operator=(const FrameSocket&) = delete;

  int fd() const { return fd_; }
  // Next received frame, false if none is waiting.
  bool receive(std::vector<uint8_t>& out);
  void send(const uint8_t* data, size_t len);
  // Sends queued frames until the queue is empty or qemu's queue is full; true when empty.
  bool flush();
  bool backlog() const { return !outq_.empty(); }
  uint64_t frames_in() const { return in_; }
  uint64_t frames_out() const { return out_; }

 private:
  int fd_ = -1;
  std::string local_, guest_;
  std::deque<std::vector<uint8_t>> outq_;
  uint64_t in_ = 0, out_ = 0;
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
