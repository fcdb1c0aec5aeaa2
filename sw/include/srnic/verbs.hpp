// srnic/verbs.hpp: verbs-style host API for the srnic RoCEv2 NIC (device, PD, MR, CQ, RC QP).
//
// Control-path calls (open, create, register, modify) throw srnic::sw::Error; data-path calls
// (post_send, post_recv, poll_cq) return error codes and never throw for bad input. Posting on
// a NIC known to be fatal (Device::query_fatal) throws Error(EIO).
// Numeric values of enums and flags equal their libibverbs counterparts.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <stdexcept>
#include <string>
#include <vector>

#include "srnic/abi.hpp"
#include "srnic/backend.hpp"

namespace srnic::sw {

// Control-path failure; code() is an errno value (EINVAL, ENOMEM, ENODEV, EIO, ETIMEDOUT).
class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

enum class QpState : uint8_t { Reset = 0, Init = 1, Rtr = 2, Rts = 3, Sqd = 4, Sqe = 5, Err = 6 };
enum class Mtu : uint8_t { Mtu256 = 1, Mtu512 = 2, Mtu1024 = 3, Mtu2048 = 4, Mtu4096 = 5 };
enum class WrOpcode : uint8_t { RdmaWrite = 0, RdmaWriteWithImm = 1, Send = 2, SendWithImm = 3, RdmaRead = 4 };
enum class WcOpcode : uint8_t { Send = 0, RdmaWrite = 1, RdmaRead = 2, Recv = 128, RecvRdmaWithImm = 129 };
enum class WcStatus : uint8_t {
  Success = 0, LocLenErr = 1, LocQpOpErr = 2, LocEecOpErr = 3, LocProtErr = 4, WrFlushErr = 5,
  MwBindErr = 6, BadRespErr = 7, LocAccessErr = 8, RemInvReqErr = 9, RemAccessErr = 10,
  RemOpErr = 11, RetryExcErr = 12, RnrRetryExcErr = 13, LocRddViolErr = 14, RemInvRdReqErr = 15,
  RemAbortErr = 16, InvEecnErr = 17, InvEecStateErr = 18, FatalErr = 19, RespTimeoutErr = 20,
  GeneralErr = 21,
};

// Bit-flag sets (ibv_access_flags, ibv_send_flags, ibv_wc_flags, ibv_qp_attr_mask).
struct Access {
  enum : unsigned { LocalWrite = 1u, RemoteWrite = 2u, RemoteRead = 4u, RemoteAtomic = 8u };
};
struct SendFlags {
  enum : unsigned { Fence = 1u, Signaled = 2u, Solicited = 4u, Inline = 8u };
};
struct WcFlags {
  enum : unsigned { Grh = 1u, WithImm = 2u, IpCsumOk = 4u, WithInv = 8u };
};
struct QpAttrMask {
  enum : uint32_t {
    State = 1u << 0, CurState = 1u << 1, EnSqdAsyncNotify = 1u << 2, AccessFlags = 1u << 3,
    PkeyIndex = 1u << 4, Port = 1u << 5, Qkey = 1u << 6, Av = 1u << 7, PathMtu = 1u << 8,
    Timeout = 1u << 9, RetryCnt = 1u << 10, RnrRetry = 1u << 11, RqPsn = 1u << 12,
    MaxQpRdAtomic = 1u << 13, AltPath = 1u << 14, MinRnrTimer = 1u << 15, SqPsn = 1u << 16,
    MaxDestRdAtomic = 1u << 17, PathMigState = 1u << 18, Cap = 1u << 19, DestQpn = 1u << 20,
    RateLimit = 1u << 25,
  };
};

// Names as libibverbs prints them (ibv_wc_status_str style); "unknown" for other values.
const char* to_string(WcStatus s);
const char* to_string(WcOpcode op);
const char* to_string(WrOpcode op);
const char* to_string(QpState s);
// Comma-separated attribute names of a QpAttrMask value, e.g. "DEST_QPN,RQ_PSN".
std::string attr_mask_string(uint32_t mask);
uint32_t mtu_bytes(Mtu mtu);

// RoCEv2 flow entropy: flow label from the QPN pair and the UDP source port derived from it
// (0xC000..0xFFFF), as the Linux rdma_calc_flow_label / rdma_flow_label_to_udp_sport helpers.
uint32_t calc_flow_label(uint32_t local_qpn, uint32_t remote_qpn);
uint16_t flow_label_to_udp_sport(uint32_t flow_label);

// NIC_STATUS decoded (docs/abi.md, decision 108). FATAL means a DMA access of host memory was
// answered with SLVERR or DECERR: from then on the NIC writes nothing to host memory (no CQE)
// and sends no frame, until a reset. The other fields describe that first error.
struct NicStatus {
  uint32_t raw = 0;       // the register value
  bool fatal = false;     // bit 0
  bool is_write = false;  // bit 1: the error answered a write (B channel), else a read (R channel)
  uint8_t code = 0;       // bits 3:2: AXI response code, 2 SLVERR, 3 DECERR
  uint8_t axi_id = 0;     // bits 7:4: reads 0 send WQE, 1 TX payload, 2 receive WQE, 3 completion WQE
  static NicStatus decode(uint32_t raw);
};
// E.g. "PCIe read error (SLVERR) on AXI ID 1 (TX payload)"; "no fatal error" when not fatal.
std::string to_string(const NicStatus& s);

struct DeviceCaps {
  uint32_t version = 0;  // REG_VERSION
  unsigned log_qps = 0, log_mrs = 0, log_cqs = 0;
  uint32_t max_qp = 0, max_mr = 0, max_cq = 0;
  uint32_t first_qpn = 2;           // QPN 0 and 1 are reserved (IB special QPs)
  uint32_t max_qp_wr = 1u << 15;    // ring entries per SQ/RQ
  uint32_t max_cqe = 1u << 15;      // ring entries per CQ
  uint64_t max_msg_size = 1ull << 31;
};

struct Sge {
  uint64_t addr = 0;  // virtual address inside the MR named by lkey
  uint32_t length = 0;
  uint32_t lkey = 0;
};

struct SendWr {
  uint64_t wr_id = 0;
  const SendWr* next = nullptr;
  const Sge* sg_list = nullptr;
  int num_sge = 0;                 // must be 1
  WrOpcode opcode = WrOpcode::Send;
  unsigned send_flags = 0;         // SendFlags (Inline unsupported)
  uint32_t imm_data = 0;           // network byte order, copied to the wire as stored
  uint64_t remote_addr = 0;        // RDMA WRITE / READ
  uint32_t rkey = 0;
};

struct RecvWr {
  uint64_t wr_id = 0;
  const RecvWr* next = nullptr;
  const Sge* sg_list = nullptr;
  int num_sge = 0;  // must be 1
};

// One completion, mirroring ibv_wc.
struct WorkCompletion {
  uint64_t wr_id = 0;
  WcStatus status = WcStatus::Success;
  WcOpcode opcode = WcOpcode::Send;
  uint32_t byte_len = 0;
  uint32_t imm_data = 0;   // network byte order (valid with WcFlags::WithImm)
  unsigned wc_flags = 0;   // WcFlags
  uint32_t qp_num = 0;
  uint64_t timestamp = 0;  // NIC core cycle counter when the CQE was written, 48 bits
};

// RoCEv2/IPv4 address vector (ibv_ah_attr subset).
struct AddressVector {
  uint64_t dmac = 0;        // peer MAC as a 48-bit number (0x020000000001 = 02:00:00:00:00:01)
  uint32_t dip = 0;         // peer IPv4 as a number (10.0.0.1 = 0x0A000001)
  uint32_t flow_label = 0;  // 0: derive the UDP source port from the QPN pair
};

// ibv_qp_attr subset; a field counts only when its QpAttrMask bit is given to modify().
struct QpAttr {
  QpState qp_state = QpState::Reset;
  QpState cur_qp_state = QpState::Reset;
  Mtu path_mtu = Mtu::Mtu1024;
  unsigned qp_access_flags = 0;  // Access::Remote*
  uint16_t pkey_index = 0;       // must be 0
  uint8_t port_num = 1;          // must be 1
  AddressVector ah_attr;
  uint32_t dest_qp_num = 0;
  uint32_t rq_psn = 0;
  uint32_t sq_psn = 0;
  uint8_t max_rd_atomic = 0;
  uint8_t max_dest_rd_atomic = 0;
  uint8_t min_rnr_timer = 0;  // 0..31
  uint8_t timeout = 0;        // 0..31 (4.096 us * 2^timeout, 0 = infinite)
  uint8_t retry_cnt = 0;      // 0..7
  uint8_t rnr_retry = 0;      // 0..7 (7 = infinite)
};

struct QpCap {
  uint32_t max_send_wr = 0;  // rounded up to a power of two (at least 2)
  uint32_t max_recv_wr = 0;
  uint32_t max_send_sge = 1;  // must be <= 1
  uint32_t max_recv_sge = 1;
  uint32_t max_inline_data = 0;  // must be 0
};

class CompletionQueue;
class Device;
class QueuePair;

struct QpInitAttr {
  CompletionQueue* send_cq = nullptr;
  CompletionQueue* recv_cq = nullptr;
  QpCap cap;
  bool sq_sig_all = false;  // every send WR generates a completion
  bool wire_ext = false;    // QP context flags bit0: extended wire mode
};

class ProtectionDomain {
 public:
  ProtectionDomain(Device& dev, uint32_t handle) : dev_(dev), handle_(handle) {}
  Device& device() const { return dev_; }
  uint32_t handle() const { return handle_; }

 private:
  Device& dev_;
  uint32_t handle_;
};

// A registered, physically contiguous region. Destroying it invalidates the MR table entry.
class MemoryRegion {
 public:
  ~MemoryRegion();
  MemoryRegion(const MemoryRegion&) = delete;
  MemoryRegion& operator=(const MemoryRegion&) = delete;

  uint32_t lkey() const { return key_; }
  uint32_t rkey() const { return key_; }  // the NIC uses one key for both
  uint32_t index() const { return key_ >> 8; }
  uint64_t addr() const { return iova_; }  // virtual base (iova) the keys refer to
  uint64_t pa() const { return pa_; }
  uint64_t length() const { return length_; }
  unsigned access() const { return access_; }
  const ProtectionDomain& pd() const { return pd_; }

 private:
  friend class Device;
  MemoryRegion(Device& dev, const ProtectionDomain& pd, uint32_t key, uint64_t iova, uint64_t pa,
               uint64_t length, unsigned access);
  Device& dev_;
  const ProtectionDomain& pd_;
  uint32_t key_;
  uint64_t iova_, pa_, length_;
  unsigned access_;
};

// A CQ ring of 2^n 32-byte CQEs in host memory.
class CompletionQueue {
 public:
  ~CompletionQueue();
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;

  // Copies up to num_entries completions into wc; returns how many (0 when empty).
  // Retires the completed WQEs on their QPs and reports the consumer index to the NIC
  // (DB_CQ) at least every half ring and at the end of a call once ci_batch are unreported.
  // Once the device is known to be fatal (Device::fatal(); poll_cq itself reads no register),
  // the CQEs the NIC wrote come first; when the ring has no more, every WR still outstanding
  // on the QPs attached to this CQ (their SQ if send_cq is this CQ, their RQ if recv_cq is)
  // completes with WR_FLUSH_ERR, unsignaled sends too, oldest first per queue, QPs by QPN.
  int poll_cq(int num_entries, WorkCompletion* wc);
  // Writes DB_CQ with the current consumer index if it changed since the last write.
  void update_ci();
  // End-of-poll consumer-index report threshold, 1 (default) .. size()/2.
  void set_ci_batch(uint32_t n);

  uint32_t cqn() const { return cqn_; }
  uint32_t size() const { return 1u << log_size_; }  // entries
  unsigned log_size() const { return log_size_; }
  uint64_t base() const { return base_; }
  uint32_t ci() const { return ci_; }  // free-running consumer index
  Device& device() const { return dev_; }

 private:
  friend class Device;
  CompletionQueue(Device& dev, uint32_t cqn, unsigned log_size, uint64_t base);
  friend class QueuePair;
  void ring_ci();
  int flush_outstanding(int num_entries, WorkCompletion* wc);
  // CQEs of a QP that was reset: consumed without being returned (by free-running index)
  void discard_qp(uint32_t qpn);
  std::deque<uint32_t> skip_;
  Device& dev_;
  uint32_t cqn_;
  unsigned log_size_;
  uint64_t base_;
  uint32_t ci_ = 0;
  uint32_t db_ci_ = 0;  // last consumer index written to DB_CQ
  uint32_t ci_batch_ = 1;
};

// A reliable-connected QP with SQ/RQ rings of 64-byte WQEs in host memory.
class QueuePair {
 public:
  ~QueuePair();
  QueuePair(const QueuePair&) = delete;
  QueuePair& operator=(const QueuePair&) = delete;

  // Checks the transition and attributes like ib_modify_qp_is_ok, then issues QP_MODIFY with
  // the full QP context. Throws Error(EINVAL) for a bad transition/attribute, Error(EIO) if the
  // NIC rejects the command; the QP is unchanged after a throw. RESET discards the outstanding
  // WRs without completions: the CQEs of the QP's earlier life are never returned by poll_cq.
  void modify(const QpAttr& attr, uint32_t attr_mask);

  // Post a list of WRs (linked by next) and ring the doorbell once. All or nothing: returns 0,
  // EINVAL (bad WR or QP state) or ENOMEM (ring full) with *bad_wr naming the offending WR.
  // Throws Error(EIO) naming the cause, posting nothing, once the device is known to be fatal.
  int post_send(const SendWr* wr, const SendWr** bad_wr = nullptr);
  int post_recv(const RecvWr* wr, const RecvWr** bad_wr = nullptr);

  uint32_t qp_num() const { return qpn_; }
  QpState state() const { return state_; }
  const QpAttr& attr() const { return attr_; }  // attributes as last applied
  const QpCap& cap() const { return cap_; }     // actual capacities (ring entries)
  const abi::QpContext& context() const { return ctx_; }
  uint16_t udp_sport() const { return ctx_.udp_sport; }
  CompletionQueue& send_cq() const { return *send_cq_; }
  CompletionQueue& recv_cq() const { return *recv_cq_; }
  const ProtectionDomain& pd() const { return pd_; }

  uint32_t sq_size() const { return 1u << log_sq_; }
  uint32_t rq_size() const { return 1u << log_rq_; }
  uint64_t sq_base() const { return ctx_.sq_base; }
  uint64_t rq_base() const { return ctx_.rq_base; }
  uint32_t sq_pi() const { return sq_pi_; }  // free-running producer indices
  uint32_t rq_pi() const { return rq_pi_; }
  uint32_t sq_outstanding() const { return sq_pi_ - sq_ci_; }  // posted, not yet retired
  uint32_t rq_outstanding() const { return rq_pi_ - rq_ci_; }
  // Completions whose wqe_idx named no outstanding WQE (NIC or test bug indicator).
  uint64_t stale_completions() const { return stale_; }

 private:
  friend class Device;
  friend class CompletionQueue;
  QueuePair(Device& dev, const ProtectionDomain& pd, uint32_t qpn, const QpInitAttr& init,
            unsigned log_sq, unsigned log_rq, uint64_t sq_base, uint64_t rq_base);
  void retire(bool recv, uint16_t wqe_idx);
  int flush(bool recv, int max, WorkCompletion* wc);
  [[noreturn]] void throw_fatal(const char* call) const;
  Device& dev_;
  const ProtectionDomain& pd_;
  uint32_t qpn_;
  CompletionQueue* send_cq_;
  CompletionQueue* recv_cq_;
  bool sq_sig_all_;
  unsigned log_sq_, log_rq_;
  QpCap cap_;
  QpState state_ = QpState::Reset;
  QpAttr attr_;
  abi::QpContext ctx_;
  uint32_t sq_pi_ = 0, sq_ci_ = 0, rq_pi_ = 0, rq_ci_ = 0;
  uint64_t stale_ = 0;
};

// One opened NIC. Must outlive every object created from it.
class Device {
 public:
  // Reads ID/VERSION/CAPS/MAC/IPV4; throws Error(ENODEV) if this is not a compatible srnic.
  explicit Device(Backend& backend);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  Backend& backend() const { return be_; }
  const DeviceCaps& caps() const { return caps_; }

  void set_mac(uint64_t mac);  // 48-bit value, MAC_LO/MAC_HI
  void set_ipv4(uint32_t ip);
  uint64_t mac() const { return mac_; }
  uint32_t ipv4() const { return ipv4_; }
  void set_sched_burst(uint32_t bytes);
  void set_sched_wqes(uint32_t n);  // 1..8
  void set_tx_window(uint32_t packets);  // in-flight cap per QP (TX_WINDOW); 0 = no cap
  uint64_t read_timestamp();        // TS_LO then TS_HI (core cycles)
  uint32_t read_counter(int idx);   // abi::CNT_*

  // The verbs DEVICE_FATAL event, polled (the NIC has no interrupt for it): reads NIC_STATUS
  // (one register read, ~1 us in the simulation) while the device is not known to be fatal
  // and returns the status if FATAL is set, else nullopt. The first FATAL seen is kept: the bit
  // is sticky until reset, so later calls read nothing and return it. From then on poll_cq
  // flushes the outstanding WRs in software and post_send/post_recv throw Error(EIO).
  std::optional<NicStatus> query_fatal();
  // What query_fatal() has seen, without a register read.
  const std::optional<NicStatus>& fatal() const { return fatal_; }

  std::unique_ptr<ProtectionDomain> alloc_pd();
  // Registers [addr, addr+length) with pa == addr (simulation: virtual == physical).
  std::unique_ptr<MemoryRegion> reg_mr(const ProtectionDomain& pd, uint64_t addr, uint64_t length,
                                       unsigned access);
  std::unique_ptr<MemoryRegion> reg_mr_phys(const ProtectionDomain& pd, uint64_t iova, uint64_t pa,
                                            uint64_t length, unsigned access);
  // A CQ with at least `cqe` entries (rounded up to a power of two, minimum 2).
  std::unique_ptr<CompletionQueue> create_cq(uint32_t cqe);
  std::unique_ptr<QueuePair> create_qp(const ProtectionDomain& pd, const QpInitAttr& init);

  // Runs one command through CMD_DATA0..15 + CMD and waits for CMD_STATUS; throws Error(EIO)
  // on the error bit and Error(ETIMEDOUT) if busy persists past the command timeout. Only the
  // CMD_DATA words that differ from what this Device last wrote there are written (the Device
  // owns the command registers). Inside a command batch it only writes the command.
  void execute(uint8_t opcode, uint32_t index, const void* payload, size_t len);
  void set_command_timeout_ns(uint64_t ns) { cmd_timeout_ns_ = ns; }

  // Command batches: while one is open, execute() (and so create_qp, modify, reg_mr, create_cq)
  // writes each command without waiting for it: the NIC holds a command's register writes while
  // the previous one executes and runs them in order. end_commands() waits for the last one and
  // reads CMD_STATUS once; if the NIC refused one, it throws Error(EIO) naming that command (the
  // NIC skips every command written after it, so the objects they touched must be destroyed or
  // reset). Batches nest; the outermost end_commands() waits. Prefer the CommandBatch guard.
  // A QP reset or destroyed in a batch has the CQEs of its earlier life discarded when the
  // batch's commands are known done (the NIC may write them until its reset completes).
  void begin_commands() { ++batch_depth_; }
  void end_commands();
  uint64_t commands_written() const { return cmds_written_; }
  uint64_t command_data_writes_saved() const { return cmd_words_saved_; }

  QueuePair* find_qp(uint32_t qpn) const { return qpn < qps_.size() ? qps_[qpn] : nullptr; }


 private:
  friend class MemoryRegion;
  friend class CompletionQueue;
  friend class QueuePair;
  static uint32_t alloc_index(std::vector<uint8_t>& used, uint32_t first, const char* what);
  // A QP_MODIFY to RESET of qpn was written: its CQEs of the earlier life in cq are discarded
  // once the command is known to be done (now, or when the batch it is in ends), so that none
  // the NIC writes before the command completes is returned either.
  void discard_after_reset(CompletionQueue& cq, uint32_t qpn);
  std::vector<std::pair<CompletionQueue*, uint32_t>> discards_;  // waiting for their batch's end
  Backend& be_;
  DeviceCaps caps_;
  uint64_t mac_ = 0;
  uint32_t ipv4_ = 0;
  uint32_t next_pd_ = 1;
  uint8_t tag_seq_ = 0;
  uint64_t cmd_timeout_ns_ = 1000000;
  std::optional<NicStatus> fatal_;
  // command registers: what was last written to CMD_DATA (valid bits per word), the commands
  // written since CMD_STATUS was last read and how many of them the NIC reported accepted
  void wait_commands();
  uint32_t cmd_data_[abi::CMD_DATA_WORDS] = {};
  uint32_t cmd_data_valid_ = 0;
  unsigned batch_depth_ = 0;
  std::vector<uint32_t> cmd_unread_;  // command words since the last CMD_STATUS read
  uint64_t cmds_written_ = 0, cmd_words_saved_ = 0;
  std::vector<uint8_t> mr_used_, cq_used_, qp_used_;
  std::vector<uint8_t> mr_last_tag_;
  std::vector<QueuePair*> qps_;
};

// Opens a command batch on a Device for its lifetime; finish() ends it (and throws what
// Device::end_commands throws); the destructor ends it without throwing if finish() was not called.
class CommandBatch {
 public:
  explicit CommandBatch(Device& dev) : dev_(&dev) { dev.begin_commands(); }
  ~CommandBatch();
  CommandBatch(const CommandBatch&) = delete;
  CommandBatch& operator=(const CommandBatch&) = delete;
  void finish();

 private:
  Device* dev_;
};

}  // namespace srnic::sw
