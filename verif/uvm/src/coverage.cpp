// Functional coverage: bin definition, sampling, cross products, percentages and the report.
#include "srnic/uvm/coverage.hpp"

#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "srnic/uvm/component.hpp"

namespace srnic::verif::uvm {

namespace {
// Names end up in coverage files and reports: printable, no quotes.
void check_name(const std::string& what, const std::string& name) {
  if (name.empty()) throw std::invalid_argument(what + " name is empty");
  for (const char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '\'' || c == '"' || c == 0x7f) {
      throw std::invalid_argument(what + " name '" + name + "' has a quote or control character");
    }
  }
}

// Counters of destroyed covergroups that an external database may still read.
std::vector<std::vector<uint64_t>>& kept_counters() {
  static std::vector<std::vector<uint64_t>> kept;
  return kept;
}
}  // namespace

// ---- CoverItem ---------------------------------------------------------------------------

CoverItem::CoverItem(Covergroup& group, std::string name)
    : group_(group), name_(std::move(name)) {
  check_name("cover item", name_);
}

void CoverItem::check_open() const {
  if (group_.frozen()) {
    throw std::logic_error("covergroup '" + group_.name() + "': bins of '" + name_ +
                           "' changed after sampling started");
  }
}

void CoverItem::add_bin(const std::string& name, BinKind kind) {
  check_open();
  check_name("bin", name);
  for (const auto& n : names_) {
    if (n == name) throw std::invalid_argument("duplicate bin '" + name + "' in '" + name_ + "'");
  }
  names_.push_back(name);
  kinds_.push_back(kind);
  hits_.push_back(0);
}

uint64_t CoverItem::hits(const std::string& bin) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == bin) return hits_[i];
  }
  throw std::out_of_range("no bin '" + bin + "' in '" + name_ + "'");
}

size_t CoverItem::goal_bins() const {
  size_t n = 0;
  for (const BinKind k : kinds_) n += k == BinKind::Normal;
  return n;
}

size_t CoverItem::covered_bins() const {
  size_t n = 0;
  for (size_t i = 0; i < kinds_.size(); ++i) {
    n += kinds_[i] == BinKind::Normal && hits_[i] >= at_least_;
  }
  return n;
}

double CoverItem::coverage() const {
  const size_t goals = goal_bins();
  return goals == 0 ? 100.0 : 100.0 * static_cast<double>(covered_bins()) / goals;
}

// ---- Coverpoint --------------------------------------------------------------------------

void Coverpoint::add_range(const std::string& name, BinKind kind, int64_t lo, int64_t hi) {
  if (lo > hi) throw std::invalid_argument("bin '" + name + "': lo > hi");
  add_bin(name, kind);
  ranges_.push_back({lo, hi, static_cast<uint32_t>(names_.size() - 1)});
}

Coverpoint& Coverpoint::range(const std::string& name, int64_t lo, int64_t hi) {
  add_range(name, BinKind::Normal, lo, hi);
  return *this;
}

Coverpoint& Coverpoint::bin(const std::string& name, std::initializer_list<int64_t> values) {
  if (values.size() == 0) throw std::invalid_argument("bin '" + name + "' has no values");
  add_bin(name, BinKind::Normal);
  for (const int64_t v : values) ranges_.push_back({v, v, static_cast<uint32_t>(names_.size() - 1)});
  return *this;
}

Coverpoint& Coverpoint::bins_each(const std::string& prefix, int64_t lo, int64_t hi) {
  if (lo > hi) throw std::invalid_argument("bins '" + prefix + "': lo > hi");
  for (int64_t v = lo;; ++v) {
    range(prefix + "[" + std::to_string(v) + "]", v, v);
    if (v == hi) break;
  }
  return *this;
}

Coverpoint& Coverpoint::bins_split(const std::string& prefix, int64_t lo, int64_t hi, size_t n) {
  if (lo > hi || n == 0) throw std::invalid_argument("bins '" + prefix + "': bad split");
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (n > span) n = static_cast<size_t>(span);
  const uint64_t width = span / n;
  for (size_t i = 0; i < n; ++i) {
    const int64_t b = static_cast<int64_t>(static_cast<uint64_t>(lo) + i * width);
    const int64_t e = i + 1 == n ? hi : static_cast<int64_t>(static_cast<uint64_t>(b) + width - 1);
    range(prefix + "[" + std::to_string(i) + "]", b, e);
  }
  return *this;
}

Coverpoint& Coverpoint::ignore(const std::string& name, int64_t lo, int64_t hi) {
  add_range(name, BinKind::Ignore, lo, hi);
  return *this;
}

Coverpoint& Coverpoint::illegal(const std::string& name, int64_t lo, int64_t hi) {
  add_range(name, BinKind::Illegal, lo, hi);
  return *this;
}

Coverpoint& Coverpoint::default_bin(const std::string& name) {
  if (default_ >= 0) throw std::invalid_argument("'" + name_ + "' already has a default bin");
  add_bin(name, BinKind::Default);
  default_ = static_cast<int32_t>(names_.size() - 1);
  return *this;
}

Coverpoint& Coverpoint::at_least(uint32_t n) {
  check_open();
  at_least_ = n ? n : 1;
  return *this;
}

Coverpoint& Coverpoint::weight(uint32_t w) {
  check_open();
  weight_ = w;
  return *this;
}

bool Coverpoint::sample(int64_t v) {
  last_.clear();
  // Illegal, then ignore, take precedence over normal bins.
  for (const BinKind special : {BinKind::Illegal, BinKind::Ignore}) {
    for (const Range& r : ranges_) {
      if (kinds_[r.bin] == special && v >= r.lo && v <= r.hi) {
        ++hits_[r.bin];
        return special != BinKind::Illegal;
      }
    }
  }
  for (const Range& r : ranges_) {
    if (kinds_[r.bin] != BinKind::Normal || v < r.lo || v > r.hi) continue;
    // A bin counts once per sample even if several of its values or ranges match.
    bool seen = false;
    for (const uint32_t b : last_) seen |= b == r.bin;
    if (seen) continue;
    ++hits_[r.bin];
    last_.push_back(r.bin);
  }
  if (last_.empty() && default_ >= 0) ++hits_[static_cast<size_t>(default_)];
  return true;
}

// ---- Cross -------------------------------------------------------------------------------

Cross::Cross(Covergroup& group, std::string name, std::vector<Coverpoint*> points)
    : CoverItem(group, std::move(name)), points_(std::move(points)) {
  if (points_.size() < 2) throw std::invalid_argument("cross '" + name_ + "' needs 2+ points");
  for (const Coverpoint* p : points_) {
    if (!p || &p->group() != &group) {
      throw std::invalid_argument("cross '" + name_ + "': coverpoint from another group");
    }
  }
}

Cross& Cross::ignore_if(std::function<bool(const std::vector<std::string>&)> pred) {
  check_open();
  ignores_.push_back(std::move(pred));
  return *this;
}

Cross& Cross::at_least(uint32_t n) {
  check_open();
  at_least_ = n ? n : 1;
  return *this;
}

Cross& Cross::weight(uint32_t w) {
  check_open();
  weight_ = w;
  return *this;
}

void Cross::freeze() {
  normal_.assign(points_.size(), {});
  slot_.assign(points_.size(), {});
  size_t total = 1;
  for (size_t p = 0; p < points_.size(); ++p) {
    slot_[p].assign(points_[p]->bins(), -1);
    for (size_t b = 0; b < points_[p]->bins(); ++b) {
      if (points_[p]->bin_kind(b) != BinKind::Normal) continue;
      slot_[p][b] = static_cast<int32_t>(normal_[p].size());
      normal_[p].push_back(static_cast<uint32_t>(b));
    }
    total *= normal_[p].size();
  }
  // Bins in odometer order, the last point varying fastest; names "a,b".
  odometer_.assign(points_.size(), 0);
  std::vector<std::string> parts(points_.size());
  for (size_t n = 0; n < total; ++n) {
    size_t rem = n;
    for (size_t p = points_.size(); p-- > 0;) {
      parts[p] = points_[p]->bin_name(normal_[p][rem % normal_[p].size()]);
      rem /= normal_[p].size();
    }
    std::string bname;
    for (size_t p = 0; p < parts.size(); ++p) bname += (p ? "," : "") + parts[p];
    bool ignored = false;
    for (const auto& pred : ignores_) ignored |= pred(parts);
    names_.push_back(bname);
    kinds_.push_back(ignored ? BinKind::Ignore : BinKind::Normal);
    hits_.push_back(0);
  }
}

void Cross::sample() {
  // Combine every normal-bin hit of every point (usually one each).
  const size_t np = points_.size();
  for (size_t p = 0; p < np; ++p) {
    if (points_[p]->last_hits().empty()) return;
    odometer_[p] = 0;
  }
  for (;;) {
    size_t index = 0;
    for (size_t p = 0; p < np; ++p) {
      const uint32_t pbin = points_[p]->last_hits()[odometer_[p]];
      index = index * normal_[p].size() + static_cast<size_t>(slot_[p][pbin]);
    }
    ++hits_[index];
    size_t p = np;
    while (p-- > 0) {
      if (++odometer_[p] < points_[p]->last_hits().size()) break;
      odometer_[p] = 0;
    }
    if (p == SIZE_MAX) return;
  }
}

// ---- Covergroup --------------------------------------------------------------------------

Covergroup::Covergroup(std::string name, Component* owner) : name_(std::move(name)), owner_(owner) {
  check_name("covergroup", name_);
}

Covergroup::~Covergroup() {
  if (!keep_alive_) return;
  for (CoverItem* item : items()) kept_counters().push_back(std::move(item->hits_));
}

std::string Covergroup::hier() const { return owner_ ? owner_->path() + "." + name_ : name_; }

Coverpoint& Covergroup::coverpoint(const std::string& name) {
  if (frozen_) throw std::logic_error("covergroup '" + name_ + "': coverpoint added after freeze");
  for (const auto& i : items()) {
    if (i->name() == name) throw std::invalid_argument("duplicate cover item '" + name + "'");
  }
  points_.push_back(std::make_unique<Coverpoint>(*this, name));
  return *points_.back();
}

Cross& Covergroup::cross(const std::string& name, std::initializer_list<Coverpoint*> points) {
  if (frozen_) throw std::logic_error("covergroup '" + name_ + "': cross added after freeze");
  for (const auto& i : items()) {
    if (i->name() == name) throw std::invalid_argument("duplicate cover item '" + name + "'");
  }
  crosses_.push_back(std::make_unique<Cross>(*this, name, std::vector<Coverpoint*>(points)));
  return *crosses_.back();
}

std::vector<CoverItem*> Covergroup::items() const {
  std::vector<CoverItem*> v;
  for (const auto& p : points_) v.push_back(p.get());
  for (const auto& c : crosses_) v.push_back(c.get());
  return v;
}

void Covergroup::freeze() {
  if (frozen_) return;
  for (const auto& p : points_) {
    if (p->bins() == 0) {
      throw std::logic_error("covergroup '" + name_ + "': coverpoint '" + p->name() + "' has no bins");
    }
    p->last_.reserve(p->bins());
  }
  for (const auto& c : crosses_) c->freeze();
  frozen_ = true;
}

void Covergroup::sample(std::initializer_list<int64_t> values) {
  sample(values.begin(), values.size());
}

void Covergroup::sample(const int64_t* values, size_t n) {
  if (n != points_.size()) {
    throw std::invalid_argument("covergroup '" + name_ + "': " + std::to_string(n) +
                                " values for " + std::to_string(points_.size()) + " coverpoints");
  }
  for (size_t i = 0; i < n; ++i) sample_point(i, values[i]);
  end_sample();
}

void Covergroup::sample_point(size_t index, int64_t v) {
  if (!frozen_) freeze();
  Coverpoint& cp = *points_.at(index);
  if (!cp.sample(v)) {
    ++illegal_;
    if (owner_) {
      owner_->error("COV_ILLEGAL", name_ + "." + cp.name() + ": illegal value " + std::to_string(v));
    }
  }
}

void Covergroup::end_sample() {
  if (!frozen_) freeze();
  ++samples_;
  for (const auto& c : crosses_) c->sample();
}

double Covergroup::coverage() const {
  double sum = 0;
  uint64_t weights = 0;
  for (const CoverItem* i : items()) {
    sum += i->coverage() * i->weight();
    weights += i->weight();
  }
  return weights == 0 ? 100.0 : sum / static_cast<double>(weights);
}

void Covergroup::print(std::ostream& os, bool bins) const {
  const auto pct = [](double v) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << v << '%';
    return s.str();
  };
  os << "covergroup " << hier() << ": " << pct(coverage()) << " (goal " << pct(goal_) << ", "
     << samples_ << " samples" << (goal_met() ? ")" : ", BELOW GOAL)") << '\n';
  for (const CoverItem* item : items()) {
    const bool is_cross = dynamic_cast<const Cross*>(item) != nullptr;
    os << "  " << (is_cross ? "cross " : "coverpoint ") << item->name() << ": "
       << pct(item->coverage()) << " (" << item->covered_bins() << "/" << item->goal_bins()
       << " bins)\n";
    if (!bins) continue;
    for (size_t b = 0; b < item->bins(); ++b) {
      const BinKind k = item->bin_kind(b);
      const char* tag = k == BinKind::Normal
                            ? (item->hits(b) >= item->at_least() ? "" : "  <- not covered")
                        : k == BinKind::Ignore  ? "  (ignore)"
                        : k == BinKind::Illegal ? "  (illegal)"
                                                : "  (default)";
      os << "    " << std::left << std::setw(24) << item->bin_name(b) << std::right
         << std::setw(10) << item->hits(b) << tag << '\n';
    }
  }
}

}  // namespace srnic::verif::uvm
