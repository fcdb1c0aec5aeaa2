// In-order scoreboard base: `expected` and `actual` are subscribers feeding two queues; each time
// both hold an item the oldest pair is compared. A mismatch is an ERROR whose text comes from
// compare() (say where the first difference is); the first one is also kept for the final
// report. At check, items left on either side are errors.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "srnic/uvm/component.hpp"
#include "srnic/uvm/tlm.hpp"

namespace srnic::verif::uvm {

namespace detail {
template <class T, class = void>
struct Streamable : std::false_type {};
template <class T>
struct Streamable<T, std::void_t<decltype(std::declval<std::ostream&>() << std::declval<const T&>())>>
    : std::true_type {};
}  // namespace detail

template <class T>
class Scoreboard : public Component {
 public:
  Scoreboard(Component& parent, std::string name)
      : Component(parent, std::move(name)), expected(*this, true), actual(*this, false) {}

  // Connect the reference model (or predictor) to `expected`, the monitor to `actual`.
  class Input : public Subscriber<T> {
   public:
    Input(Scoreboard& sb, bool exp) : sb_(sb), exp_(exp) {}
    void write(const T& t) override { sb_.push(t, exp_); }

   private:
    Scoreboard& sb_;
    bool exp_;
  };
  Input expected;
  Input actual;

  uint64_t matched() const { return matched_; }
  uint64_t mismatched() const { return mismatched_; }
  size_t pending_expected() const { return exp_.size(); }
  size_t pending_actual() const { return act_.size(); }
  // "" while everything matched; else the description of the first mismatch.
  const std::string& first_mismatch() const { return first_; }

 protected:
  // Returns true if equal; otherwise fills `why` with the first difference. The default uses
  // operator== and describe().
  virtual bool compare(const T& exp, const T& act, std::string& why) const {
    if (exp == act) return true;
    why = "expected " + describe(exp) + ", got " + describe(act);
    return false;
  }
  // Text for one item: operator<< if T has one.
  virtual std::string describe(const T& t) const {
    if constexpr (detail::Streamable<T>::value) {
      std::ostringstream os;
      os << t;
      return os.str();
    } else {
      (void)t;
      return "<item>";
    }
  }

  void check() override {
    if (!exp_.empty()) {
      error("SB_MISSING", std::to_string(exp_.size()) +
                              " expected item(s) never observed; first: " + describe(exp_.front()));
    }
    if (!act_.empty()) {
      error("SB_UNEXPECTED", std::to_string(act_.size()) +
                                 " observed item(s) with nothing expected; first: " +
                                 describe(act_.front()));
    }
  }

  void report() override {
    info("SB_SUMMARY", std::to_string(matched_) + " matched, " + std::to_string(mismatched_) +
                           " mismatched" + (first_.empty() ? "" : "; first mismatch: " + first_),
         verbosity::kLow);
  }

 private:
  void push(const T& t, bool exp) {
    (exp ? exp_ : act_).try_put(t);
    while (!exp_.empty() && !act_.empty()) {
      T e, a;
      exp_.try_get(e);
      act_.try_get(a);
      std::string why;
      if (compare(e, a, why)) {
        ++matched_;
        continue;
      }
      const std::string text = "item #" + std::to_string(matched_ + mismatched_) + ": " + why;
      if (first_.empty()) first_ = text;
      ++mismatched_;
      error("SB_MISMATCH", text);
    }
  }

  TlmFifo<T> exp_;
  TlmFifo<T> act_;
  uint64_t matched_ = 0;
  uint64_t mismatched_ = 0;
  std::string first_;
};

}  // namespace srnic::verif::uvm
