// ReportServer: the one place messages go. Each line carries the simulated time, severity,
// component path, message id and text. INFO is filtered by per-component verbosity; every
// issued message is counted per severity and per id; reaching the error limit requests a stop
// (the run phase ends, checks and the summary still run); FATAL throws FatalError, which the
// test runner catches before printing the summary.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace srnic::verif::uvm {

enum class Severity { Info, Warning, Error, Fatal };
const char* to_string(Severity s);

// Verbosity levels for INFO messages: a message is printed when its level <= the threshold of
// its component. The default threshold is Medium.
namespace verbosity {
constexpr int kNone = 0;
constexpr int kLow = 100;
constexpr int kMedium = 200;
constexpr int kHigh = 300;
constexpr int kFull = 400;
constexpr int kDebug = 500;
}  // namespace verbosity

// Thrown by ReportServer::report() for a FATAL message, after it is printed and counted.
class FatalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ReportServer {
 public:
  using TimeSource = std::function<uint64_t()>;

  explicit ReportServer(std::ostream& out);

  std::ostream& out() const { return *out_; }
  // Source of the simulated time printed with each message (cycles unless told otherwise).
  void set_time_source(TimeSource src) { time_ = std::move(src); }
  uint64_t now() const { return time_ ? time_() : 0; }

  // Default INFO threshold, and per-component thresholds: `path` applies to that component and
  // every component below it; the longest matching path wins.
  void set_verbosity(int threshold) { default_verbosity_ = threshold; }
  void set_verbosity(const std::string& path, int threshold);
  int verbosity(std::string_view path) const;
  bool enabled(std::string_view path, int level) const { return level <= verbosity(path); }

  // 0 disables the limit. When the ERROR (+FATAL) count reaches the limit a stop is requested.
  void set_error_limit(uint64_t limit) { error_limit_ = limit; }
  uint64_t error_limit() const { return error_limit_; }
  bool stop_requested() const { return stop_requested_; }
  const std::string& stop_reason() const { return stop_reason_; }
  void request_stop(const std::string& reason);

  // Issues one message. INFO uses `level` for filtering; FATAL throws FatalError.
  void report(Severity sev, std::string_view path, std::string_view id, std::string_view text,
              int level = verbosity::kMedium);
  void info(std::string_view path, std::string_view id, std::string_view text,
            int level = verbosity::kMedium) {
    report(Severity::Info, path, id, text, level);
  }
  void warning(std::string_view path, std::string_view id, std::string_view text) {
    report(Severity::Warning, path, id, text);
  }
  void error(std::string_view path, std::string_view id, std::string_view text) {
    report(Severity::Error, path, id, text);
  }
  [[noreturn]] void fatal(std::string_view path, std::string_view id, std::string_view text);

  uint64_t count(Severity sev) const { return counts_[static_cast<int>(sev)]; }
  uint64_t count_id(std::string_view id) const;
  // ERROR + FATAL: what decides pass or fail.
  uint64_t failures() const { return count(Severity::Error) + count(Severity::Fatal); }

  // Prints counts per severity and per id, and the stop reason if any.
  void summary() const;

 private:
  std::ostream* out_;
  TimeSource time_;
  int default_verbosity_ = verbosity::kMedium;
  std::vector<std::pair<std::string, int>> path_verbosity_;
  uint64_t error_limit_ = 0;
  bool stop_requested_ = false;
  std::string stop_reason_;
  uint64_t counts_[4] = {0, 0, 0, 0};
  std::map<std::string, uint64_t, std::less<>> id_counts_;
};

}  // namespace srnic::verif::uvm
