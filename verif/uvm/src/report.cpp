// ReportServer: message formatting, verbosity lookup, counting, error limit and summary.
#include "srnic/uvm/report.hpp"

#include <iomanip>
#include <ostream>

namespace srnic::verif::uvm {

const char* to_string(Severity s) {
  switch (s) {
    case Severity::Info: return "INFO";
    case Severity::Warning: return "WARNING";
    case Severity::Error: return "ERROR";
    case Severity::Fatal: return "FATAL";
  }
  return "?";
}

namespace {
// True if `path` is `prefix` or lies below it in the component tree.
bool under(std::string_view path, std::string_view prefix) {
  if (prefix.empty()) return true;
  if (path.size() < prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '.';
}
}  // namespace

ReportServer::ReportServer(std::ostream& out) : out_(&out) {}

void ReportServer::set_verbosity(const std::string& path, int threshold) {
  for (auto& pv : path_verbosity_) {
    if (pv.first == path) {
      pv.second = threshold;
      return;
    }
  }
  path_verbosity_.emplace_back(path, threshold);
}

int ReportServer::verbosity(std::string_view path) const {
  int best = default_verbosity_;
  size_t best_len = 0;
  bool found = false;
  for (const auto& [prefix, threshold] : path_verbosity_) {
    if (under(path, prefix) && (!found || prefix.size() >= best_len)) {
      best = threshold;
      best_len = prefix.size();
      found = true;
    }
  }
  return best;
}

void ReportServer::request_stop(const std::string& reason) {
  if (stop_requested_) return;
  stop_requested_ = true;
  stop_reason_ = reason;
}

void ReportServer::report(Severity sev, std::string_view path, std::string_view id,
                          std::string_view text, int level) {
  if (sev == Severity::Info && !enabled(path, level)) return;
  ++counts_[static_cast<int>(sev)];
  auto it = id_counts_.find(id);
  if (it == id_counts_.end()) it = id_counts_.emplace(std::string(id), 0).first;
  ++it->second;

  *out_ << std::left << std::setw(7) << to_string(sev) << std::right << " @ " << std::setw(8)
        << now() << ": " << (path.empty() ? std::string_view("(top)") : path) << " [" << id
        << "] " << text << '\n';

  if (sev == Severity::Fatal) {
    out_->flush();
    throw FatalError(std::string(path) + " [" + std::string(id) + "] " + std::string(text));
  }
  if (sev == Severity::Error && error_limit_ != 0 && failures() >= error_limit_ &&
      !stop_requested_) {
    request_stop("error limit " + std::to_string(error_limit_) + " reached");
    *out_ << "INFO    @ " << std::setw(8) << now() << ": (report) [ERROR_LIMIT] " << stop_reason_
          << ", stopping the run\n";
  }
}

void ReportServer::fatal(std::string_view path, std::string_view id, std::string_view text) {
  report(Severity::Fatal, path, id, text);
  throw FatalError("unreachable");  // report() always throws for FATAL
}

uint64_t ReportServer::count_id(std::string_view id) const {
  const auto it = id_counts_.find(id);
  return it == id_counts_.end() ? 0 : it->second;
}

void ReportServer::summary() const {
  std::ostream& o = *out_;
  o << "--- report summary ---\n";
  for (int s = 0; s < 4; ++s) {
    o << "  " << std::left << std::setw(8) << to_string(static_cast<Severity>(s)) << std::right
      << counts_[s] << '\n';
  }
  if (!id_counts_.empty()) {
    o << "  by id:\n";
    for (const auto& [id, n] : id_counts_) o << "    [" << id << "] " << n << '\n';
  }
  if (stop_requested_) o << "  stopped early: " << stop_reason_ << '\n';
}

}  // namespace srnic::verif::uvm
