// Functional coverage in the spirit of SystemVerilog covergroups: a Covergroup owns Coverpoints
// (bins of values and ranges, plus ignore, illegal and default bins) and Crosses of coverpoints.
// Each sample() counts every normal bin that holds the value (bins may overlap, as in SV); an
// illegal value counts only in its illegal bin and is reported as an ERROR through the owning
// component; a value in no normal bin goes to the default bin if there is one. Coverage of an
// item is the share of its normal bins hit at least `at_least` times; a group's coverage is the
// weighted mean of its items. Bins are fixed by the first sample (or by registration in the
// Verilator coverage database, see coverage_db.hpp); the counters then never move.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace srnic::verif::uvm {

class Component;
class Covergroup;

enum class BinKind { Normal, Ignore, Illegal, Default };

// Bins and counters shared by coverpoints and crosses.
class CoverItem {
 public:
  virtual ~CoverItem() = default;
  const std::string& name() const { return name_; }
  size_t bins() const { return names_.size(); }
  const std::string& bin_name(size_t i) const { return names_.at(i); }
  BinKind bin_kind(size_t i) const { return kinds_.at(i); }
  uint64_t hits(size_t i) const { return hits_.at(i); }
  // Hits of the bin called `bin` (any kind); throws if there is none.
  uint64_t hits(const std::string& bin) const;
  // Normal bins (the ones coverage is measured on), and how many are covered.
  size_t goal_bins() const;
  size_t covered_bins() const;
  // covered_bins / goal_bins in percent; 100 for an item with no normal bins.
  double coverage() const;
  uint32_t at_least() const { return at_least_; }
  uint32_t weight() const { return weight_; }
  const Covergroup& group() const { return group_; }
  // Address of bin i's counter; stable once the group is frozen.
  uint64_t* counter(size_t i) { return &hits_.at(i); }

 protected:
  CoverItem(Covergroup& group, std::string name);
  void add_bin(const std::string& name, BinKind kind);
  void check_open() const;

  Covergroup& group_;
  std::string name_;
  std::vector<std::string> names_;
  std::vector<BinKind> kinds_;
  std::vector<uint64_t> hits_;
  uint32_t at_least_ = 1;
  uint32_t weight_ = 1;

  friend class Covergroup;
};

class Coverpoint : public CoverItem {
 public:
  Coverpoint(Covergroup& group, std::string name) : CoverItem(group, std::move(name)) {}

  // One bin holding one value / a set of values / the range [lo, hi].
  Coverpoint& bin(const std::string& name, int64_t value) { return range(name, value, value); }
  Coverpoint& bin(const std::string& name, std::initializer_list<int64_t> values);
  Coverpoint& range(const std::string& name, int64_t lo, int64_t hi);
  // One bin per value in [lo, hi], named prefix[v].
  Coverpoint& bins_each(const std::string& prefix, int64_t lo, int64_t hi);
  // [lo, hi] split into n bins of near-equal width (the last takes the remainder), prefix[i].
  Coverpoint& bins_split(const std::string& prefix, int64_t lo, int64_t hi, size_t n);
  Coverpoint& ignore(const std::string& name, int64_t lo, int64_t hi);
  Coverpoint& illegal(const std::string& name, int64_t lo, int64_t hi);
  // Catches values that fall in no other bin; not a coverage goal.
  Coverpoint& default_bin(const std::string& name = "default");
  Coverpoint& at_least(uint32_t n);
  Coverpoint& weight(uint32_t w);

  // Normal bins hit by the latest sample (what crosses combine).
  const std::vector<uint32_t>& last_hits() const { return last_; }

 private:
  friend class Covergroup;
  struct Range {
    int64_t lo, hi;
    uint32_t bin;
  };
  void add_range(const std::string& name, BinKind kind, int64_t lo, int64_t hi);
  // Returns false for an illegal value.
  bool sample(int64_t v);

  std::vector<Range> ranges_;
  int32_t default_ = -1;
  std::vector<uint32_t> last_;
};

class Cross : public CoverItem {
 public:
  Cross(Covergroup& group, std::string name, std::vector<Coverpoint*> points);

  // Bins whose per-point bin names satisfy `pred` are ignored (not goals, not counted).
  Cross& ignore_if(std::function<bool(const std::vector<std::string>&)> pred);
  Cross& at_least(uint32_t n);
  Cross& weight(uint32_t w);
  const std::vector<Coverpoint*>& points() const { return points_; }

 private:
  friend class Covergroup;
  void freeze();
  void sample();

  std::vector<Coverpoint*> points_;
  std::vector<std::vector<uint32_t>> normal_;  // per point: its normal bin indices
  std::vector<std::vector<int32_t>> slot_;     // per point: point bin -> index in normal_, or -1
  std::vector<std::function<bool(const std::vector<std::string>&)>> ignores_;
  std::vector<size_t> odometer_;
};

class Covergroup {
 public:
  // `owner` (optional) gives the hierarchy and reports illegal bins.
  explicit Covergroup(std::string name, Component* owner = nullptr);
  virtual ~Covergroup();
  Covergroup(const Covergroup&) = delete;
  Covergroup& operator=(const Covergroup&) = delete;

  const std::string& name() const { return name_; }
  // owner path + "." + name, or the name alone.
  std::string hier() const;
  Component* owner() const { return owner_; }

  Coverpoint& coverpoint(const std::string& name);
  Cross& cross(const std::string& name, std::initializer_list<Coverpoint*> points);

  // values[i] is sampled by the i-th coverpoint (declaration order), then crosses are updated.
  void sample(std::initializer_list<int64_t> values);
  void sample(const int64_t* values, size_t n);

  void set_goal(double percent) { goal_ = percent; }
  double goal() const { return goal_; }
  double coverage() const;
  bool goal_met() const { return coverage() >= goal_; }
  uint64_t samples() const { return samples_; }
  uint64_t illegal_hits() const { return illegal_; }

  const std::vector<std::unique_ptr<Coverpoint>>& coverpoints() const { return points_; }
  const std::vector<std::unique_ptr<Cross>>& crosses() const { return crosses_; }
  // Every item, coverpoints first, in declaration order.
  std::vector<CoverItem*> items() const;

  // Fixes the bins; later bin definitions throw. Called by the first sample.
  void freeze();
  bool frozen() const { return frozen_; }
  // Marks the counters as referenced from outside (the Verilator coverage database): they are
  // kept alive after this group is destroyed.
  void keep_counters_alive() { keep_alive_ = true; }

  // Text report: group, item and (with bins) per-bin lines with hit counts.
  void print(std::ostream& os, bool bins = true) const;

 protected:
  // Samples the coverpoint at `index` with `v`; call end_sample() after the last one.
  void sample_point(size_t index, int64_t v);
  void end_sample();

 private:
  std::string name_;
  Component* owner_;
  std::vector<std::unique_ptr<Coverpoint>> points_;
  std::vector<std::unique_ptr<Cross>> crosses_;
  double goal_ = 100.0;
  bool frozen_ = false;
  bool keep_alive_ = false;
  uint64_t samples_ = 0;
  uint64_t illegal_ = 0;
};

// A covergroup sampled from one transaction type: each coverpoint has an extractor.
template <class T>
class CovergroupOf : public Covergroup {
 public:
  using Covergroup::Covergroup;
  using Extract = std::function<int64_t(const T&)>;

  Coverpoint& coverpoint(const std::string& name, Extract fn) {
    Coverpoint& cp = Covergroup::coverpoint(name);
    extract_.push_back(std::move(fn));
    return cp;
  }
  void sample(const T& t) {
    if (extract_.size() != coverpoints().size()) {
      throw std::logic_error("covergroup '" + name() + "': coverpoint without an extractor");
    }
    for (size_t i = 0; i < extract_.size(); ++i) sample_point(i, extract_[i](t));
    end_sample();
  }

 private:
  std::vector<Extract> extract_;
};

}  // namespace srnic::verif::uvm
