// The README example: a sequence feeds a driver on a toy bus, a one-cycle register stands in for
// the design, two monitors feed a scoreboard, and a covergroup samples the input transactions.
#include "srnic/uvm/uvm.hpp"

namespace uvm = srnic::verif::uvm;

struct Txn {
  int op = 0, len = 0;
  bool operator==(const Txn& o) const { return op == o.op && len == o.len; }
};
struct Bus {
  bool valid = false;
  Txn t;
};

struct RandSeq : uvm::Sequence<Txn> {  // 20 random transactions
  int left = 20;
  RandSeq() : Sequence("rand") {}
  uvm::Next next(Txn& t) override {
    if (left-- == 0) return uvm::Next::Done;
    t = {static_cast<int>(rng().uniform(0, 2)), static_cast<int>(rng().uniform(0, 1500))};
    return uvm::Next::Item;
  }
};
struct Drv : uvm::Driver<Txn> {  // one bus beat per item
  Bus* bus;
  Drv(uvm::Component& p, std::string n, Bus* b) : Driver(p, std::move(n)), bus(b) {}
  bool drive(Txn& t) override { *bus = {true, t}; return true; }
  void drive_idle() override { bus->valid = false; }
};
struct Mon : uvm::Monitor<Txn> {  // publishes every valid beat
  const Bus* bus;
  Mon(uvm::Component& p, std::string n, const Bus* b) : Monitor(p, std::move(n)), bus(b) {}
  void sample() override { if (bus->valid) publish(bus->t); }
};

struct ExampleTest : uvm::Test {
  Bus in, out;  // the "design": out <= in at each clock edge
  uvm::Sequencer<Txn> seqr{*this, "seqr"};
  Drv drv{*this, "drv", &in};
  Mon in_mon{*this, "in_mon", &in}, out_mon{*this, "out_mon", &out};
  uvm::Scoreboard<Txn> sb{*this, "sb"};
  uvm::CovergroupOf<Txn> cg{"txn_cg", this};
  uvm::SubscriberFn<Txn> cov{[this](const Txn& t) { cg.sample(t); }};
  RandSeq seq;

  explicit ExampleTest(uvm::Context& ctx) : Test(ctx) {
    auto& op = cg.coverpoint("op", [](const Txn& t) { return t.op; }).bins_each("op", 0, 2);
    auto& len = cg.coverpoint("len", [](const Txn& t) { return t.len; });
    len.range("small", 0, 63).range("mid", 64, 1023).range("big", 1024, 1500);
    cg.cross("op_x_len", {&op, &len});
  }
  void configure(uvm::Phaser& ph) override {
    ph.set_edge([this] { out = in; });
    ph.set_drain_cycles(2);  // let the last beat through the register
  }
  void connect() override {
    drv.connect_sequencer(seqr);
    in_mon.ap.connect(sb.expected);
    in_mon.ap.connect(cov);
    out_mon.ap.connect(sb.actual);
  }
  void start_of_run() override { seqr.start(seq); }
  void report() override {
    info("COVERAGE", cg.name() + " " + std::to_string(cg.coverage()) + "%");
    if (!cg.goal_met()) warning("COVERAGE", "below goal");
  }
};
SRNIC_UVM_TEST(ExampleTest, "example");

int main(int argc, char** argv) { return uvm::TestRegistry::global().main(argc, argv); }
