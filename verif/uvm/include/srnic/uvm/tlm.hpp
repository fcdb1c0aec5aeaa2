// TLM-lite: analysis ports with write() fan-out to subscribers, an analysis FIFO subscriber and
// a bounded or growing FIFO. All are single-threaded; a FIFO that stays within its capacity
// never allocates after construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace srnic::verif::uvm {

// Anything that accepts transactions written to an analysis port.
template <class T>
class Subscriber {
 public:
  virtual ~Subscriber() = default;
  virtual void write(const T& t) = 0;
};

// Broadcasts each write() to every connected subscriber, in connection order. A port is itself
// a subscriber, so a child's port can be connected to a parent's port (hierarchical export).
template <class T>
class AnalysisPort : public Subscriber<T> {
 public:
  void connect(Subscriber<T>& s) { subs_.push_back(&s); }
  void write(const T& t) override {
    ++writes_;
    for (Subscriber<T>* s : subs_) s->write(t);
  }
  size_t subscribers() const { return subs_.size(); }
  uint64_t writes() const { return writes_; }

 private:
  std::vector<Subscriber<T>*> subs_;
  uint64_t writes_ = 0;
};

// A subscriber that calls a function: connect a port straight to a member function.
template <class T>
class SubscriberFn : public Subscriber<T> {
 public:
  explicit SubscriberFn(std::function<void(const T&)> fn) : fn_(std::move(fn)) {}
  void write(const T& t) override { fn_(t); }

 private:
  std::function<void(const T&)> fn_;
};

// Ring-buffer FIFO. capacity 0 = unbounded (grows by doubling); otherwise try_put() refuses
// when full.
template <class T>
class TlmFifo {
 public:
  explicit TlmFifo(size_t capacity = 0)
      : bounded_(capacity != 0), buf_(capacity != 0 ? capacity : 16) {}

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  bool full() const { return bounded_ && count_ == buf_.size(); }
  size_t capacity() const { return bounded_ ? buf_.size() : 0; }

  bool try_put(const T& t) {
    if (full()) return false;
    if (count_ == buf_.size()) grow();
    buf_[(head_ + count_) % buf_.size()] = t;
    ++count_;
    return true;
  }
  bool try_get(T& out) {
    if (count_ == 0) return false;
    out = std::move(buf_[head_]);
    head_ = (head_ + 1) % buf_.size();
    --count_;
    return true;
  }
  // Oldest element; requires !empty().
  const T& front() const {
    if (count_ == 0) throw std::logic_error("TlmFifo::front on an empty FIFO");
    return buf_[head_];
  }
  // i-th oldest element; requires i < size().
  const T& at(size_t i) const {
    if (i >= count_) throw std::out_of_range("TlmFifo::at");
    return buf_[(head_ + i) % buf_.size()];
  }
  void clear() {
    head_ = 0;
    count_ = 0;
  }

 private:
  void grow() {
    std::vector<T> bigger(buf_.size() * 2);
    for (size_t i = 0; i < count_; ++i) bigger[i] = std::move(buf_[(head_ + i) % buf_.size()]);
    buf_ = std::move(bigger);
    head_ = 0;
  }

  bool bounded_;
  std::vector<T> buf_;
  size_t head_ = 0;
  size_t count_ = 0;
};

// Subscriber that queues every written transaction (unbounded) for later get.
template <class T>
class AnalysisFifo : public Subscriber<T> {
 public:
  void write(const T& t) override { fifo_.try_put(t); }
  bool try_get(T& out) { return fifo_.try_get(out); }
  size_t size() const { return fifo_.size(); }
  bool empty() const { return fifo_.empty(); }
  const TlmFifo<T>& fifo() const { return fifo_; }

 private:
  TlmFifo<T> fifo_;
};

}  // namespace srnic::verif::uvm
