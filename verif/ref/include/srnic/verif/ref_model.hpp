// Reference transport model: from the initial host memory, the MR and QP tables and every
// posted work request, predicts the final bytes of every buffer and every completion.
//
// Semantics (RC, independent of the RTL): each QP's send queue is one in-order stream; its
// SENDs and WRITE_WITH_IMMs consume the peer's receive WRs in order. Errors are decided
// statically (keys, PDs, access rights, bounds, receive WR size, RNR); the first error moves the
// QP to ERR and every later WR of that queue completes with WR_FLUSH_ERR. See verif/README.md
// for the exact rules, including which bytes and completions the model leaves undetermined.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace srnic::verif {

// ibv_wr_opcode values used by the NIC.
enum class WrOpcode : uint8_t { Write = 0, WriteImm = 1, Send = 2, SendImm = 3, Read = 4 };

// ibv_wc_opcode values.
enum class WcOpcode : uint8_t { Send = 0, RdmaWrite = 1, RdmaRead = 2, Recv = 128, RecvRdmaWithImm = 129 };

// ibv_wc_status values (the subset the model produces, plus the ones a scoreboard may see).
enum class WcStatus : uint8_t {
  Success = 0,
  LocLenErr = 1,
  LocQpOpErr = 2,
  LocProtErr = 4,
  WrFlushErr = 5,
  BadRespErr = 7,
  LocAccessErr = 8,
  RemInvReqErr = 9,
  RemAccessErr = 10,
  RemOpErr = 11,
  RetryExcErr = 12,
  RnrRetryExcErr = 13,
  FatalErr = 19,
  GeneralErr = 21,
};

constexpr uint32_t kWcWithImm = 2;  // ibv_wc_flags IBV_WC_WITH_IMM

// ibv_access_flags bits (MR access and QP access flags).
constexpr uint8_t kAccessLocalWrite = 1;
constexpr uint8_t kAccessRemoteWrite = 2;
constexpr uint8_t kAccessRemoteRead = 4;
constexpr uint8_t kAccessRemoteAtomic = 8;

const char* to_string(WrOpcode op);
const char* to_string(WcOpcode op);
const char* to_string(WcStatus s);

// A range of host physical memory with its initial contents.
struct Buffer {
  std::string name;
  uint64_t pa = 0;
  std::vector<uint8_t> init;
};

// An MR table entry: key (lkey = rkey) -> iova/length, physically contiguous at pa.
struct MemoryRegion {
  uint32_t key = 0;
  uint64_t iova = 0;
  uint64_t length = 0;
  uint64_t pa = 0;
  uint32_t pd = 0;
  uint8_t access = 0;  // kAccess* bits
  bool valid = true;
};

// Bytes the host software writes just before posting a WR (for example fresh contents for the
// WR's source buffer): `len` bytes at physical address `pa` of host `host`, produced by
// Workload::fill. len 0: no store.
struct HostStore {
  uint32_t host = 0;
  uint64_t pa = 0;
  uint64_t len = 0;
  uint64_t tag = 0;  // passed to Workload::fill
};

struct SendWr {
  uint64_t wr_id = 0;
  WrOpcode opcode = WrOpcode::Write;
  uint64_t laddr = 0;   // virtual address inside the MR named by lkey
  uint32_t length = 0;
  uint32_t lkey = 0;
  uint64_t raddr = 0;   // WRITE / READ
  uint32_t rkey = 0;
  uint32_t imm = 0;     // the ImmDt wire bytes as a big-endian number, passed through unchanged
  bool signaled = true;
  bool fence = false;   // wait for every earlier WR of this QP to complete
  HostStore store;      // host store made before this WR is posted (after the earlier WRs of
                        // the QP completed, so it never races with them)
};

struct RecvWr {
  uint64_t wr_id = 0;
  uint64_t addr = 0;
  uint32_t length = 0;
  uint32_t lkey = 0;
};

// One RC QP and everything posted to it during the test.
struct QpSpec {
  uint32_t qpn = 0;
  uint32_t pd = 0;
  uint8_t access = kAccessRemoteWrite | kAccessRemoteRead;  // QP access flags (responder side)
  uint32_t peer_host = 0;
  uint32_t peer_qpn = 0;
  uint8_t rnr_retry = 7;  // 7 = retry forever
  uint8_t retry_cnt = 7;  // ACK timeouts before RETRY_EXC_ERR; 7 = retry forever (as the NIC)
  uint32_t mtu = 4096;    // path MTU: where a message's packets split (WRITE_WITH_IMM checks)
  bool host_err = false;  // the host moves this QP to ERR at a time the model cannot know: both
                          // directions of the connection and both receive queues are relaxed
  bool reset = false;     // the hosts reset the connection (both QPs to RESET) at a time the model
                          // cannot know: RESET discards every WR not completed by then, without a
                          // completion. Both directions and both receive queues are relaxed,
                          // nothing must complete, no WR fails for it. Set on both QPs.
  std::vector<SendWr> send;
  std::vector<RecvWr> recv;
};

struct HostSpec {
  std::vector<Buffer> buffers;
  std::vector<MemoryRegion> mrs;
  std::vector<QpSpec> qps;
};

struct Workload {
  std::vector<HostSpec> hosts;
  // Frames may be lost, reordered or duplicated (go-back-N at work). A stream that fails then
  // has its send queue relaxed: a lost fatal NAK ends in RETRY_EXC_ERR after the timeouts
  // (with retry_cnt 7 the requester would retry for ever: such a workload must not lose fatal
  // NAKs), and a READ before the failing WR may never get its lost responses (the responder's
  // QP is in ERR): it fails with the NAK's status, and its target is checked only if it succeeds.
  // After a drop the NIC may also RNR-NAK a request whose receive is posted (decision 89): with
  // rnr_retry below 7 a WR that needs a receive may then fail, so such a stream's send queue and
  // the receive queue it feeds are relaxed.
  bool lossy = false;
  // Bytes [offset, offset + n) of a HostStore; required when any WR has a store.
  std::function<void(const HostStore& store, uint64_t offset, uint8_t* dst, size_t n)> fill;
};

enum class QueueKind : uint8_t { Send, Recv };

// A work completion. When status != Success only wr_id, status and qpn are meaningful.
struct Completion {
  uint64_t wr_id = 0;
  WcStatus status = WcStatus::Success;
  WcOpcode opcode = WcOpcode::Send;
  uint32_t byte_len = 0;
  uint32_t imm = 0;        // meaningful when wc_flags has kWcWithImm
  uint32_t wc_flags = 0;
  uint32_t qpn = 0;
};

// The completions one queue must produce, in order.
struct ExpectedQueue {
  uint32_t host = 0;
  uint32_t qpn = 0;
  QueueKind kind = QueueKind::Send;
  uint32_t peer_host = 0;  // the connected QP; its send queue feeds this receive queue
  uint32_t peer_qpn = 0;
  // Exact list, used when !relaxed.
  std::vector<Completion> completions;
  // Relaxed: the QP or its peer moves to ERR at a time the model cannot know (see
  // verif/README.md). The queue completes its WRs in posting order, each at most once: a prefix
  // of WRs completes as predicted (unsignaled successes stay silent), then the first error
  // completion, with one of the statuses its WR lists in `errors`, then WR_FLUSH_ERR for every
  // later WR. `candidates` lists every WR in posting order.
  bool relaxed = false;
  struct Candidate {
    Completion on_success;    // what the WR reports if it completes normally
    bool signaled = true;     // a successful unsignaled send WR produces no completion
    bool can_succeed = true;  // false once the WR's own error or flush is certain
    std::vector<WcStatus> errors;  // the statuses it may report as the queue's first error
    int32_t consumer = -1;    // receive queue: index of the peer's send WR that consumes it
  };
  std::vector<Candidate> candidates;
  // Relaxed: WRs [0, must_complete) must have completed (or succeeded silently) by the end of
  // the test; `must_complete_why` says why (the QP ends in ERR, which flushes what is left).
  // Later WRs may stay outstanding, except that a receive WR whose consumer completed
  // successfully must have completed too.
  size_t must_complete = 0;
  std::string must_complete_why;
  // Relaxed: the hosts reset the QP (QpSpec::reset), so a WR may also stay without completion
  // after its consumer or its peer receive completed (the reset discarded what the host had not
  // polled yet).
  bool reset = false;
};

// Who wrote a byte: one send WR of one QP.
struct OpRef {
  uint32_t host = 0;
  uint32_t qpn = 0;
  size_t wr_index = 0;
  uint64_t wr_id = 0;
  WrOpcode opcode = WrOpcode::Write;
  bool host_store = false;  // the host's store made before posting that WR, not the WR itself
  // The receive WR it consumes (SEND, WRITE_WITH_IMM), on the peer QP; -1: none. Its successful
  // completion shows the WR was placed in full, as the WR's own successful completion does.
  int32_t recv_index = -1;
  uint32_t peer_host = 0;
  uint32_t peer_qpn = 0;
};

// The last writer of each byte of a buffer, kept as runs: a table with an entry per byte
// would cost four bytes per byte, too much for GiB-sized messages.
class WriterMap {
 public:
  void assign(size_t n, int32_t v) {  // n bytes, all written by v
    n_ = n;
    runs_.clear();
    runs_[0] = v;
  }
  void set(size_t lo, size_t hi, int32_t v);  // bytes [lo, hi) written by v
  int32_t operator[](size_t k) const { return std::prev(runs_.upper_bound(k))->second; }
  size_t runs() const { return runs_.size(); }

 private:
  size_t n_ = 0;
  std::map<size_t, int32_t> runs_;  // run start -> writer, up to the next start
};

// BufferImage::determined values.
constexpr uint8_t kByteUndetermined = 0;  // the final value depends on timing: not checked
constexpr uint8_t kByteDetermined = 1;    // checked
// Checked when the byte's last writer (a WR of a relaxed send queue, or a READ of a failing
// stream on a lossy link) is known to have completed successfully: its own completion, a later
// successful one of its queue, or that of the receive WR it consumed. Without that it may have
// been flushed while its data was in flight, and the byte is not checked.
constexpr uint8_t kByteIfWriterSucceeded = 2;

// Predicted final image of one buffer.
struct BufferImage {
  uint32_t host = 0;
  size_t index = 0;           // position in HostSpec::buffers
  std::string name;
  uint64_t pa = 0;
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> determined;  // kByte* per byte
  WriterMap writer;                 // index into Prediction::ops of the last writer, -1 = initial
};

struct Prediction {
  std::vector<BufferImage> buffers;
  std::vector<ExpectedQueue> queues;  // a send and a receive queue for every QP
  std::vector<OpRef> ops;
  std::vector<std::string> notes;     // stalls, relaxed queues, undetermined byte counts

  const ExpectedQueue* queue(uint32_t host, uint32_t qpn, QueueKind kind) const;
  const BufferImage* buffer(uint32_t host, size_t index) const;
  // "host 0 qp 0x11 wr_id 0x5 RDMA_WRITE (WR #3)"
  std::string describe_op(int32_t op) const;
};

// Runs the model. Throws std::invalid_argument for an inconsistent workload (unknown or
// asymmetric peers, duplicate QPNs, overlapping buffers, an MR that maps memory outside the
// buffers when it is used).
Prediction predict(const Workload& w);

}  // namespace srnic::verif
