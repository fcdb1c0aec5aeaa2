// Host-side I/O of srnic-interop: frame socket, QMP client, TCP helpers.
#include "host_io.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
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

FrameSocket::FrameSocket(const std::string& local_path, const std::string& guest_path)
    : local_(local_path), guest_(guest_path) {
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) fail_errno("frame socket");
  ::unlink(local_.c_str());
  const sockaddr_un a = unix_addr(local_);
  if (bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) < 0) fail_errno("bind " + local_);
  int sz = 4 << 20;
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
  setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
}

FrameSocket::~FrameSocket() {
  if (fd_ >= 0) ::close(fd_);
  ::unlink(local_.c_str());
}

bool FrameSocket::receive(std::vector<uint8_t>& out) {
  out.resize(65536);
  const ssize_t n = recv(fd_, out.data(), out.size(), 0);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
    fail_errno("receive from " + local_);
  }
  out.resize(static_cast<size_t>(n));
  ++in_;
  return true;
}

void FrameSocket::send(const uint8_t* data, size_t len) {
  outq_.emplace_back(data, data + len);
  flush();
}

bool FrameSocket::flush() {
  const sockaddr_un a = unix_addr(guest_);
  while (!outq_.empty()) {
    const std::vector<uint8_t>& f = outq_.front();
    const ssize_t n = sendto(fd_, f.data(), f.size(), 0, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EINTR) return false;
      fail_errno("send to the guest socket " + guest_);
    }
    outq_.pop_front();
    ++out_;
  }
  return true;
}

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
  const std::string greeting = line();
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
