// Host-side I/O of srnic-interop: frame socket, QMP client, TCP helpers.
#include "host_io.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace srnic::sim::interop {

namespace {

[[noreturn]] void fail_errno(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

sockaddr_un unix_addr(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) throw std::runtime_error("socket path too long: " + path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

double wall_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// ------------------------------------------------------------------------------ FrameSocket

namespace {
constexpr size_t kMaxFrame = 65536;  // qemu's stream backend takes frames up to 69632 bytes
}

FrameSocket::FrameSocket(const std::string& path, double connect_timeout_s) : path_(path) {
  const double deadline = wall_s() + connect_timeout_s;
  const sockaddr_un a = unix_addr(path_);
  for (;;) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) fail_errno("frame socket");
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) break;
    ::close(fd_);
    fd_ = -1;
    if (wall_s() > deadline) fail_errno("connect to qemu's -netdev stream socket " + path_);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  set_nonblocking(fd_);
  int sz = 4 << 20;
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
  setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
}

FrameSocket::~FrameSocket() {
  if (fd_ >= 0) ::close(fd_);
}

bool FrameSocket::drain() {
  bool any = false;
  uint8_t b[65536];
  for (;;) {
    const ssize_t n = ::recv(fd_, b, sizeof b, 0);
    if (n > 0) {
      inq_.insert(inq_.end(), b, b + n);
      any = true;
      continue;
    }
    if (n == 0) throw std::runtime_error("qemu closed the -netdev stream connection " + path_);
    if (errno == EAGAIN || errno == EWOULDBLOCK) return any;
    if (errno != EINTR) fail_errno("receive from " + path_);
  }
}

bool FrameSocket::receive(std::vector<uint8_t>& out) {
  drain();
  const size_t avail = inq_.size() - in_off_;
  if (avail < 4) return false;
  const uint8_t* p = inq_.data() + in_off_;
  const size_t len = size_t(p[0]) << 24 | size_t(p[1]) << 16 | size_t(p[2]) << 8 | p[3];
  if (len == 0 || len > kMaxFrame)
    throw std::runtime_error("bad frame length " + std::to_string(len) + " on " + path_);
  if (avail < 4 + len) return false;
  out.assign(p + 4, p + 4 + len);
  in_off_ += 4 + len;
  if (in_off_ == inq_.size()) {
    inq_.clear();
    in_off_ = 0;
  } else if (in_off_ > (1u << 20)) {
    inq_.erase(inq_.begin(), inq_.begin() + static_cast<std::ptrdiff_t>(in_off_));
    in_off_ = 0;
  }
  ++in_;
  return true;
}

void FrameSocket::send(const uint8_t* data, size_t len) {
  if (len == 0 || len > kMaxFrame) throw std::runtime_error("frame of " + std::to_string(len) + " bytes for qemu");
  outq_.emplace_back(data, data + len);
  ++out_;
  flush();
}

size_t FrameSocket::unread() const {
  int n = 0;
  if (ioctl(fd_, SIOCOUTQ, &n) < 0) fail_errno("SIOCOUTQ on " + path_);
  return static_cast<size_t>(n);
}

void FrameSocket::write_frame(const std::vector<uint8_t>& f) {
  std::vector<uint8_t> b(4 + f.size());
  const size_t len = f.size();
  b[0] = uint8_t(len >> 24);
  b[1] = uint8_t(len >> 16);
  b[2] = uint8_t(len >> 8);
  b[3] = uint8_t(len);
  std::memcpy(&b[4], f.data(), len);
  // The socket is empty (qemu read everything) and its buffer is megabytes: one write takes
  // the whole frame.
  for (;;) {
    const ssize_t n = ::send(fd_, b.data(), b.size(), MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(b.size())) return;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_errno("send to " + path_);
    throw std::runtime_error("short write of a frame to " + path_);
  }
}

bool FrameSocket::flush(bool confirm) {
  if (unread() != 0) return false;
  if (!outq_.empty()) {
    write_frame(outq_.front());
    outq_.pop_front();
    unconfirmed_ = true;
    return false;
  }
  if (!unconfirmed_) return true;
  if (!confirm) return true;
  // Sentinel: to an unused locally administered unicast MAC, local experimental EtherType.
  std::vector<uint8_t> s(60, 0);
  s[0] = 0x02;
  s[5] = 0xFE;
  s[6] = 0x02;
  s[11] = 0xFF;
  s[12] = 0x88;
  s[13] = 0xB5;
  write_frame(s);
  unconfirmed_ = false;
  ++sentinels_;
  return false;
}

bool FrameSocket::delivered() { return flush(true); }

// -------------------------------------------------------------------------------------- Qmp

Qmp::Qmp(const std::string& path, double connect_timeout_s, int side_fd, std::function<void()> on_side)
    : side_fd_(side_fd), on_side_(std::move(on_side)) {
  const double deadline = wall_s() + connect_timeout_s;
  const sockaddr_un a = unix_addr(path);
  for (;;) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) fail_errno("QMP socket");
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) break;
    ::close(fd_);
    fd_ = -1;
    if (wall_s() > deadline) fail_errno("QMP connect " + path);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // The greeting comes first, but an asynchronous event qemu raised as this client connected
  // (NETDEV_STREAM_CONNECTED: the frame socket of this run) may be read before it: skip events.
  std::string greeting = line();
  for (int i = 0; i < 8 && greeting.find("\"QMP\"") == std::string::npos &&
                  greeting.find("\"event\"") != std::string::npos; ++i)
    greeting = line();
  if (greeting.find("\"QMP\"") == std::string::npos)
    throw std::runtime_error("QMP " + path + ": unexpected greeting " + greeting);
  command("qmp_capabilities");
  // A guest left stopped by an earlier client starts out running for this one.
  command("cont");
  t_cont_ = wall_s();
}

Qmp::~Qmp() {
  if (fd_ < 0) return;
  try {
    cont();
  } catch (const std::exception&) {
  }
  ::close(fd_);
}

std::string Qmp::line() {
  for (;;) {
    const size_t nl = buf_.find('\n');
    if (nl != std::string::npos) {
      std::string l = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return l;
    }
    if (side_fd_ >= 0) {
      pollfd pf[2] = {{fd_, POLLIN, 0}, {side_fd_, POLLIN, 0}};
      poll(pf, 2, 1000);
      if (pf[1].revents & POLLIN) on_side_();
      if (!(pf[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    }
    char b[4096];
    const ssize_t n = ::read(fd_, b, sizeof b);
    if (n <= 0) throw std::runtime_error("QMP connection closed by qemu");
    buf_.append(b, static_cast<size_t>(n));
  }
}

void Qmp::command(const char* name) {
  if (on_side_) on_side_();
  const std::string c = std::string("{\"execute\":\"") + name + "\"}\n";
  if (::write(fd_, c.data(), c.size()) != static_cast<ssize_t>(c.size())) fail_errno("QMP write");
  for (;;) {
    const std::string l = line();
    if (l.find("\"return\"") != std::string::npos) return;
    if (l.find("\"error\"") != std::string::npos)
      throw std::runtime_error(std::string("QMP ") + name + " failed: " + l);
    // anything else is an asynchronous event (STOP, RESUME, ...)
  }
}

void Qmp::stop() {
  if (!running_) return;
  command("stop");
  running_ = false;
  ++stops_;
  run_s_ += wall_s() - t_cont_;
}

void Qmp::cont() {
  if (running_) return;
  command("cont");
  running_ = true;
  t_cont_ = wall_s();
}

double Qmp::run_s() const { return run_s_ + (running_ ? wall_s() - t_cont_ : 0.0); }

// ---------------------------------------------------------------------------------- TcpConn

TcpConn::~TcpConn() { close(); }

TcpConn& TcpConn::operator=(TcpConn&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = o.fd_;
    buf_ = std::move(o.buf_);
    eof_ = o.eof_;
    o.fd_ = -1;
  }
  return *this;
}

void TcpConn::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buf_.clear();
  eof_ = false;
}

bool TcpConn::connect_to(const std::string& host, uint16_t port, TcpConn& out) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) throw std::runtime_error("bad IPv4 address " + host);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail_errno("TCP socket");
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) < 0) {
    ::close(fd);
    return false;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  set_nonblocking(fd);
  out = TcpConn(fd);
  return true;
}

void TcpConn::write_all(const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len) {
    const ssize_t n = ::send(fd_, p, len, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) {
        pollfd pf{fd_, POLLOUT, 0};
        poll(&pf, 1, 100);
        continue;
      }
      fail_errno("TCP write");
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
}

void TcpConn::fill() {
  char b[4096];
  for (;;) {
    const ssize_t n = ::recv(fd_, b, sizeof b, 0);
    if (n > 0) {
      buf_.append(b, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) eof_ = true;
    else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) eof_ = true;
    return;
  }
}

bool TcpConn::try_read(size_t n, std::string& out) {
  if (fd_ < 0) return false;
  if (buf_.size() < n && !eof_) fill();
  if (buf_.size() < n) return false;
  out = buf_.substr(0, n);
  buf_.erase(0, n);
  return true;
}

// ------------------------------------------------------------------------------ TcpListener

TcpListener::TcpListener(uint16_t port) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) fail_errno("TCP socket");
  int one = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) < 0)
    fail_errno("bind 127.0.0.1:" + std::to_string(port));
  if (listen(fd_, 4) < 0) fail_errno("listen");
  socklen_t len = sizeof a;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
}

TcpListener::~TcpListener() {
  if (fd_ >= 0) ::close(fd_);
}

bool TcpListener::try_accept(TcpConn& out) {
  const int fd = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return false;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  out = TcpConn(fd);
  return true;
}

}  // namespace srnic::sim::interop
