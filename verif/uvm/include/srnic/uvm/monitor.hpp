// Monitor base: a derived monitor samples its interface in sample(), marks a transaction as
// begun when its first beat is seen and publishes it to `ap` once complete. A transaction still
// open when the run ends is an error: only whole transactions leave a monitor.
#pragma once

#include <cstdint>
#include <string>

#include "srnic/uvm/component.hpp"
#include "srnic/uvm/tlm.hpp"

namespace srnic::verif::uvm {

template <class T>
class Monitor : public Component {
 public:
  Monitor(Component& parent, std::string name) : Component(parent, std::move(name)) {}

  AnalysisPort<T> ap;

  uint64_t published() const { return published_; }
  bool in_transaction() const { return open_; }

 protected:
  // First beat of a transaction seen.
  void begin_transaction() { open_ = true; }
  // Complete transaction: write it to every subscriber.
  void publish(const T& t) {
    open_ = false;
    ++published_;
    ap.write(t);
  }

  void check() override {
    if (open_) error("MON_PARTIAL", "a transaction was still open at the end of the run");
  }

 private:
  bool open_ = false;
  uint64_t published_ = 0;
};

}  // namespace srnic::verif::uvm
