// Sequences, the sequencer and the driver base. A sequence is a C++ object stepped
// cooperatively: whenever its sequencer needs an item it calls next(), which fills in an item,
// asks to be passed over this time (Wait), or says it is over (Done). The sequencer arbitrates
// between its running sequences (FIFO, round-robin or priority-weighted random) each time the
// driver asks for an item; the driver has at most one item outstanding and reports item_done().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "srnic/uvm/component.hpp"

namespace srnic::verif::uvm {

// What Sequence::next() produced.
enum class Next { Item, Wait, Done };

enum class Arbitration {
  Fifo,        // the earliest-started sequence with an item wins
  RoundRobin,  // rotate the first-asked sequence after each grant
  Weighted,    // random among sequences, weighted by priority (sequencer's stream)
};

template <class ItemT>
class Sequencer;

template <class ItemT>
class Sequence {
 public:
  explicit Sequence(std::string name) : name_(std::move(name)) {}
  virtual ~Sequence() = default;

  const std::string& name() const { return name_; }
  // Generator body: fill `item` and return Next::Item, or return Wait or Done.
  virtual Next next(ItemT& item) = 0;
  // The driver finished an item of this sequence; `item` may carry a response.
  virtual void item_done(const ItemT& item) { (void)item; }
  // Called once after next() returned Done.
  virtual void finished() {}

  bool running() const { return running_; }
  bool done() const { return done_; }
  uint64_t items_granted() const { return granted_; }
  uint32_t priority() const { return priority_; }
  void set_priority(uint32_t p) { priority_ = p; }
  // Stream from the test seed, the sequencer path, the sequence name and its start index.
  Rng& rng() { return rng_; }
  Sequencer<ItemT>* sequencer() const { return seqr_; }

 private:
  friend class Sequencer<ItemT>;
  std::string name_;
  Sequencer<ItemT>* seqr_ = nullptr;
  Rng rng_;
  uint32_t priority_ = 100;
  uint64_t granted_ = 0;
  bool running_ = false;
  bool done_ = false;
  bool objecting_ = false;
};

template <class ItemT>
class Sequencer : public Component {
 public:
  Sequencer(Component& parent, std::string name, Arbitration arb = Arbitration::Fifo)
      : Component(parent, std::move(name)), arb_(arb) {}

  void set_arbitration(Arbitration a) { arb_ = a; }
  Arbitration arbitration() const { return arb_; }

  // Starts `seq` (not owned; it must outlive its run). With `object`, the sequencer holds an
  // objection until the sequence is done.
  void start(Sequence<ItemT>& seq, bool object = true) {
    if (seq.running_) {
      error("SEQ_START", "sequence '" + seq.name() + "' is already running");
      return;
    }
    seq.seqr_ = this;
    seq.rng_ = ctx().stream(path() + "." + seq.name() + "#" + std::to_string(starts_++));
    seq.running_ = true;
    seq.done_ = false;
    seq.objecting_ = object;
    if (object) raise_objection();
    running_.push_back(&seq);
    weights_.reserve(running_.size());
    info("SEQ_START", "started " + seq.name(), verbosity::kHigh);
  }
  // Starts a sequence the sequencer owns until the end of the test.
  template <class S>
  S& start(std::unique_ptr<S> seq, bool object = true) {
    S& ref = *seq;
    owned_.push_back(std::move(seq));
    start(static_cast<Sequence<ItemT>&>(ref), object);
    return ref;
  }

  size_t running() const { return running_.size(); }
  bool item_outstanding() const { return current_ != nullptr; }

  // Driver side: grants one item if some running sequence offers one now.
  bool try_next_item(ItemT& item) {
    if (current_) {
      error("SEQ_PROTOCOL", "try_next_item while an item is outstanding");
      return false;
    }
    const size_t n = running_.size();
    bool granted = false;
    if (arb_ == Arbitration::Weighted) {
      granted = grant_weighted(item);
    } else {
      const size_t first = arb_ == Arbitration::RoundRobin && n ? rr_next_ % n : 0;
      for (size_t k = 0; k < n && !granted; ++k) {
        const size_t i = (first + k) % n;
        if (poll(i, item)) {
          granted = true;
          rr_next_ = i + 1;
        }
      }
    }
    reap();
    return granted;
  }
  // Driver side: the outstanding item is finished; `rsp` is passed to the sequence.
  void item_done(const ItemT& rsp) {
    if (!current_) {
      error("SEQ_PROTOCOL", "item_done without an outstanding item");
      return;
    }
    Sequence<ItemT>* s = current_;
    current_ = nullptr;
    s->item_done(rsp);
  }

 private:
  // Asks running_[i] for an item; true if it produced one.
  bool poll(size_t i, ItemT& item) {
    Sequence<ItemT>* s = running_[i];
    if (s->done_) return false;
    switch (s->next(item)) {
      case Next::Item:
        ++s->granted_;
        current_ = s;
        return true;
      case Next::Wait:
        return false;
      case Next::Done:
        s->done_ = true;
        return false;
    }
    return false;
  }

  bool grant_weighted(ItemT& item) {
    const size_t n = running_.size();
    weights_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) weights_[i] = running_[i]->priority_ ? running_[i]->priority_ : 1;
    for (size_t tries = 0; tries < n; ++tries) {
      const size_t i = rng().weighted(weights_);
      weights_[i] = 0;  // ask each sequence at most once per request
      if (poll(i, item)) return true;
      bool any = false;
      for (uint32_t w : weights_) any |= w != 0;
      if (!any) break;
    }
    return false;
  }

  // Removes sequences that reported Done, keeping the round-robin pointer on the same sequence.
  void reap() {
    size_t w = 0;
    const size_t rr = running_.empty() ? 0 : rr_next_ % running_.size();
    size_t new_rr = 0;
    for (size_t i = 0; i < running_.size(); ++i) {
      Sequence<ItemT>* s = running_[i];
      if (i == rr) new_rr = w;
      if (!s->done_) {
        running_[w++] = s;
        continue;
      }
      s->running_ = false;
      if (s->objecting_) drop_objection();
      s->objecting_ = false;
      info("SEQ_DONE", s->name() + " done after " + std::to_string(s->granted_) + " item(s)",
           verbosity::kHigh);
      s->finished();
    }
    running_.resize(w);
    rr_next_ = new_rr;
  }

  Arbitration arb_;
  std::vector<Sequence<ItemT>*> running_;
  std::vector<uint32_t> weights_;
  std::vector<std::unique_ptr<Sequence<ItemT>>> owned_;
  Sequence<ItemT>* current_ = nullptr;
  size_t rr_next_ = 0;
  uint64_t starts_ = 0;
};

// Driver base: pulls an item from its sequencer whenever it is idle and calls drive() every
// cycle (starting in the cycle the item arrives) until drive() returns true.
template <class ItemT>
class Driver : public Component {
 public:
  Driver(Component& parent, std::string name) : Component(parent, std::move(name)) {}

  void connect_sequencer(Sequencer<ItemT>& s) { seqr_ = &s; }
  bool busy() const { return busy_; }
  uint64_t items_driven() const { return driven_; }

 protected:
  // One cycle of driving `item`; return true when the item is complete (then item_done is sent,
  // with `item` as the response).
  virtual bool drive(ItemT& item) = 0;
  // Called on cycles with no item (e.g. to deassert valid).
  virtual void drive_idle() {}

  void tick() override {
    if (!busy_ && seqr_ && seqr_->try_next_item(item_)) busy_ = true;
    if (!busy_) {
      drive_idle();
      return;
    }
    if (drive(item_)) {
      busy_ = false;
      ++driven_;
      seqr_->item_done(item_);
    }
  }

  void check() override {
    if (!seqr_) warning("DRV_UNCONNECTED", "driver has no sequencer");
    if (busy_) error("DRV_BUSY", "an item was still being driven at the end of the run");
  }

 private:
  Sequencer<ItemT>* seqr_ = nullptr;
  ItemT item_{};
  bool busy_ = false;
  uint64_t driven_ = 0;
};

}  // namespace srnic::verif::uvm
