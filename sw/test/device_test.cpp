// device_test.cpp: device open, register writes, command execution and memory registration.
#include <gtest/gtest.h>

#include <cerrno>
#include <set>

#include "memory_backend.hpp"
#include "srnic/verbs.hpp"

namespace srnic::sw {
namespace {

using test::MemoryBackend;

template <class T>
T payload_as(const MemoryBackend::Command& c) {
  T v;
  std::memcpy(&v, c.payload.data(), sizeof v);
  return v;
}

uint32_t le32(const uint8_t* p) { return uint32_t(p[0]) | p[1] << 8 | p[2] << 16 | uint32_t(p[3]) << 24; }
uint64_t le64(const uint8_t* p) { return uint64_t(le32(p)) | uint64_t(le32(p + 4)) << 32; }

TEST(Device, OpenReadsCaps) {
  MemoryBackend be(0x000A0C05);
  be.mmio_write32(abi::REG_MAC_LO, 0x00000001);
  be.mmio_write32(abi::REG_MAC_HI, 0x0200);
  be.mmio_write32(abi::REG_IPV4, 0x0A000001);
  Device dev(be);
  EXPECT_EQ(dev.caps().log_qps, 5u);
  EXPECT_EQ(dev.caps().log_mrs, 12u);
  EXPECT_EQ(dev.caps().log_cqs, 10u);
  EXPECT_EQ(dev.caps().max_qp, 32u);
  EXPECT_EQ(dev.caps().max_mr, 4096u);
  EXPECT_EQ(dev.caps().max_cq, 1024u);
  EXPECT_EQ(dev.caps().version, abi::VERSION_VALUE);
  EXPECT_EQ(dev.mac(), 0x020000000001ull);
  EXPECT_EQ(dev.ipv4(), 0x0A000001u);
}

// Opening the device invalidates every MR entry in one batch: an entry an earlier user left
// valid would accept a new user's keys (PD handles and key tags start again from 1).
TEST(Device, OpenInvalidatesEveryMemoryRegion) {
  MemoryBackend be(0x000A0805);   // 2^8 MR entries
  Device dev(be);
  ASSERT_EQ(be.commands.size(), 256u);
  std::set<uint32_t> seen;
  for (const auto& c : be.commands) {
    EXPECT_EQ(c.opcode, abi::CMD_MR_WRITE);
    EXPECT_EQ(payload_as<abi::MrEntry>(c).valid, 0) << "entry " << c.index;
    seen.insert(c.index);
  }
  EXPECT_EQ(seen.size(), 256u);
  EXPECT_EQ(*seen.rbegin(), 255u);
}

TEST(Device, OpenRejectsWrongId) {
  MemoryBackend be;
  be.id = 0xFFFFFFFF;
  try {
    Device dev(be);
    FAIL() << "opened a device with a bad ID";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ENODEV);
    EXPECT_NE(std::string(e.what()).find("0xFFFFFFFF"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0x53524E43"), std::string::npos) << e.what();
  }
}

TEST(Device, OpenRejectsOtherMajorVersionAcceptsMinor) {
  MemoryBackend be;
  be.version = 0x00020000;
  EXPECT_THROW(Device dev(be), Error);
  be.version = 0x00010003;
  EXPECT_NO_THROW(Device dev(be));
}

TEST(Device, OpenRejectsCapsBeyondAbi) {
  MemoryBackend be(0x00040811);  // 2^17 QPs cannot be named by a 16-bit doorbell field
  EXPECT_THROW(Device dev(be), Error);
}

TEST(Device, MacIpAndSchedulerRegisters) {
  MemoryBackend be;
  Device dev(be);
  be.clear_log();
  dev.set_mac(0x020000000A0B);
  dev.set_ipv4(0x0A000002);
  dev.set_sched_burst(4096);
  dev.set_sched_wqes(4);
  ASSERT_EQ(be.writes.size(), 5u);
  EXPECT_EQ(be.writes[0].off, abi::REG_MAC_LO);
  EXPECT_EQ(be.writes[0].value, 0x00000A0Bu);
  EXPECT_EQ(be.writes[1].off, abi::REG_MAC_HI);
  EXPECT_EQ(be.writes[1].value, 0x0200u);
  EXPECT_EQ(be.writes[2].off, abi::REG_IPV4);
  EXPECT_EQ(be.writes[2].value, 0x0A000002u);
  EXPECT_EQ(be.reg(abi::REG_SCHED_BURST), 4096u);
  EXPECT_EQ(be.reg(abi::REG_SCHED_WQES), 4u);
  EXPECT_THROW(dev.set_mac(1ull << 48), Error);
  EXPECT_THROW(dev.set_sched_wqes(9), Error);
  EXPECT_THROW(dev.set_sched_wqes(0), Error);
  EXPECT_EQ(dev.mac(), 0x020000000A0Bull);
}

TEST(Device, TimestampAndCounters) {
  MemoryBackend be;
  Device dev(be);
  be.mmio_write32(abi::REG_TS_LO, 0x89ABCDEF);  // register stand-in: seed the RO values
  be.mmio_write32(abi::REG_TS_HI, 0x00001234);
  be.mmio_write32(abi::reg_counter(abi::CNT_RX_NAK), 77);
  EXPECT_EQ(dev.read_timestamp(), 0x0000123489ABCDEFull);
  EXPECT_EQ(dev.read_counter(abi::CNT_RX_NAK), 77u);
  EXPECT_THROW(dev.read_counter(abi::NUM_COUNTERS), Error);
}

TEST(Device, ExecuteStagesPayloadThenCommand) {
  MemoryBackend be;
  Device dev(be);
  be.clear_log();
  const uint64_t saved0 = dev.command_data_writes_saved();   // the MR scrub at open
  uint8_t p[64];
  for (int i = 0; i < 64; ++i) p[i] = uint8_t(i * 3 + 1);
  dev.execute(abi::CMD_CQ_WRITE, 9, p, sizeof p);
  ASSERT_EQ(be.writes.size(), 17u);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(be.writes[i].off, abi::reg_cmd_data(i));
    EXPECT_EQ(be.writes[i].value, le32(p + 4 * i));
  }
  EXPECT_EQ(be.writes[16].off, abi::REG_CMD);
  EXPECT_EQ(be.writes[16].value, 0x03000009u);
  ASSERT_EQ(be.commands.size(), 1u);
  EXPECT_EQ(0, std::memcmp(be.commands[0].payload.data(), p, 64));

  // A short payload is zero-padded, not left over from the previous command.
  uint8_t q[4] = {0xAA, 0xBB, 0xCC, 0xDD};
  dev.execute(abi::CMD_CQ_WRITE, 1, q, sizeof q);
  EXPECT_EQ(le32(be.commands[1].payload.data()), 0xDDCCBBAAu);
  for (int i = 4; i < 64; ++i) EXPECT_EQ(be.commands[1].payload[i], 0) << i;

  // Only the words that differ from the registers' contents are written again.
  be.clear_log();
  q[1] = 0x11;
  dev.execute(abi::CMD_CQ_WRITE, 2, q, sizeof q);
  ASSERT_EQ(be.writes.size(), 2u);
  EXPECT_EQ(be.writes[0].off, abi::reg_cmd_data(0));
  EXPECT_EQ(be.writes[0].value, 0xDDCC11AAu);
  EXPECT_EQ(be.writes[1].off, abi::REG_CMD);
  dev.execute(abi::CMD_CQ_WRITE, 3, q, sizeof q);
  ASSERT_EQ(be.writes.size(), 3u);
  EXPECT_EQ(be.writes[2].off, abi::REG_CMD);
  ASSERT_EQ(be.commands.size(), 2u);
  EXPECT_EQ(0, std::memcmp(be.commands[0].payload.data(), be.commands[1].payload.data(), 64));
  EXPECT_EQ(dev.command_data_writes_saved() - saved0, 15u + 16u);
}

TEST(Device, BatchWritesCommandsWithoutWaitingAndReadsStatusOnce) {
  MemoryBackend be;
  Device dev(be);
  be.clear_log();   // the MR scrub at open
  be.cmd_busy_reads = 3;
  uint8_t p[64] = {};
  const uint32_t reads0 = be.status_reads;
  {
    CommandBatch batch(dev);
    for (uint32_t i = 0; i < 5; ++i) {
      p[0] = uint8_t(i);
      dev.execute(abi::CMD_CQ_WRITE, i, p, sizeof p);
    }
    EXPECT_EQ(be.status_reads, reads0) << "a command in a batch waited";
    EXPECT_EQ(be.commands.size(), 5u);
    batch.finish();
  }
  // busy for 3 reads after the last command, then the one that shows all 5 accepted
  EXPECT_EQ(be.status_reads, reads0 + 4);
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(be.commands[i].payload[0], i);

  // A status count that misses a command is an error, not a silent success.
  be.cmd_busy_reads = 0;
  dev.begin_commands();
  dev.execute(abi::CMD_CQ_WRITE, 0, p, sizeof p);
  be.mmio_read32(abi::REG_CMD_STATUS);  // someone else read (and cleared) the count
  EXPECT_THROW(dev.end_commands(), Error);
  EXPECT_THROW(dev.end_commands(), Error) << "end without begin";
}

TEST(Device, BatchNamesTheRefusedCommandAndSkipsTheRest) {
  MemoryBackend be;  // 16 CQs
  Device dev(be);
  be.clear_log();   // the MR scrub at open
  uint8_t p[64] = {};
  dev.begin_commands();
  dev.execute(abi::CMD_CQ_WRITE, 1, p, sizeof p);
  dev.execute(abi::CMD_CQ_WRITE, 77, p, sizeof p);  // refused: beyond the table
  dev.execute(abi::CMD_CQ_WRITE, 2, p, sizeof p);
  dev.execute(abi::CMD_CQ_WRITE, 3, p, sizeof p);
  try {
    dev.end_commands();
    FAIL() << "refusal in a batch not reported";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EIO);
    const std::string m = e.what();
    EXPECT_NE(m.find("CQ_WRITE index 77 failed"), std::string::npos) << m;
    EXPECT_NE(m.find("the 2 commands written after it were skipped"), std::string::npos) << m;
  }
  // the log holds every command the register file took: the first and the refused one
  ASSERT_EQ(be.commands.size(), 2u) << "commands after the refusal must not run";
  // The next command runs again.
  EXPECT_NO_THROW(dev.execute(abi::CMD_CQ_WRITE, 4, p, sizeof p));
  ASSERT_EQ(be.commands.size(), 3u);
  EXPECT_EQ(be.commands[2].index, 4u);
}

TEST(Device, ExecuteWaitsForBusyAndReportsErrors) {
  MemoryBackend be;
  Device dev(be);
  be.cmd_busy_reads = 5;
  uint8_t p[64] = {};
  EXPECT_NO_THROW(dev.execute(abi::CMD_CQ_WRITE, 0, p, 64));

  be.cmd_busy_reads = 0;
  try {
    dev.execute(abi::CMD_CQ_WRITE, 1u << 4, p, 64);  // index beyond the 16-entry CQ table
    FAIL() << "error bit ignored";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EIO);
    EXPECT_NE(std::string(e.what()).find("CQ_WRITE"), std::string::npos) << e.what();
  }

  be.cmd_busy_reads = 0xFFFFFFFF;
  dev.set_command_timeout_ns(50000);
  try {
    dev.execute(abi::CMD_CQ_WRITE, 0, p, 64);
    FAIL() << "stuck busy not detected";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ETIMEDOUT);
  }
}

class MrTest : public ::testing::Test {
 protected:
  MemoryBackend be;
  Device dev{be};
  std::unique_ptr<ProtectionDomain> pd = dev.alloc_pd();
  uint64_t buf = be.dma_alloc(1 << 16, 4096);
};

TEST_F(MrTest, PayloadBytesAndKeys) {
  be.clear_log();
  auto mr = dev.reg_mr_phys(*pd, 0x7F0000001000ull, buf, 0x3000, Access::LocalWrite | Access::RemoteRead);
  ASSERT_EQ(be.commands.size(), 1u);
  const auto& c = be.commands[0];
  EXPECT_EQ(c.opcode, abi::CMD_MR_WRITE);
  EXPECT_EQ(c.index, mr->index());
  const uint8_t* p = c.payload.data();
  EXPECT_EQ(le64(p + 0), 0x7F0000001000ull);  // iova
  EXPECT_EQ(le64(p + 8), 0x3000ull);          // length
  EXPECT_EQ(le64(p + 16), buf);               // pa
  EXPECT_EQ(le32(p + 24), mr->lkey());
  EXPECT_EQ(le32(p + 28), pd->handle());
  EXPECT_EQ(p[32], 0x5);
  EXPECT_EQ(p[33], 1);
  EXPECT_EQ(mr->lkey(), mr->rkey());
  EXPECT_EQ(mr->lkey() >> 8, mr->index());
  EXPECT_NE(mr->lkey() & 0xFF, 0u);
  EXPECT_EQ(mr->addr(), 0x7F0000001000ull);
  EXPECT_EQ(mr->pa(), buf);

  auto mr2 = dev.reg_mr(*pd, buf, 64, 0);
  EXPECT_NE(mr2->index(), mr->index());
  EXPECT_EQ(payload_as<abi::MrEntry>(be.commands[1]).pa, buf);
  EXPECT_EQ(payload_as<abi::MrEntry>(be.commands[1]).iova, buf);
}

TEST_F(MrTest, DeregInvalidatesAndReusedIndexGetsNewTag) {
  std::set<uint32_t> keys;
  uint32_t index = 0;
  for (int i = 0; i < 300; ++i) {  // more registrations than tags: tags must still differ per entry
    auto mr = dev.reg_mr(*pd, buf, 4096, Access::LocalWrite);
    if (i == 0) index = mr->index();
    EXPECT_EQ(mr->index(), index);
    EXPECT_NE(mr->lkey() & 0xFF, 0u);
    keys.insert(mr->lkey());
    be.clear_log();
    const uint32_t key = mr->lkey();
    mr.reset();
    ASSERT_EQ(be.commands.size(), 1u);
    EXPECT_EQ(be.commands[0].index, key >> 8);
    EXPECT_EQ(payload_as<abi::MrEntry>(be.commands[0]).valid, 0);
    auto again = dev.reg_mr(*pd, buf, 4096, Access::LocalWrite);
    EXPECT_EQ(again->index(), key >> 8);
    EXPECT_NE(again->lkey(), key) << "re-registration reused the key";
  }
  EXPECT_EQ(keys.size(), 255u);  // every nonzero tag used
}

TEST_F(MrTest, TagNeverRepeatsOnTheSameEntry) {
  // Registrations on other entries advance the tag sequence by exactly one full cycle (255),
  // so a plain counter would hand the re-registered entry its previous key again.
  auto a = dev.reg_mr(*pd, buf, 64, 0);
  const uint32_t old_key = a->lkey();
  auto keep = dev.reg_mr(*pd, buf, 64, 0);  // occupies the next entry
  for (int i = 0; i < 253; ++i) dev.reg_mr(*pd, buf, 64, 0);
  a.reset();
  auto b = dev.reg_mr(*pd, buf, 64, 0);
  EXPECT_EQ(b->index(), old_key >> 8);
  EXPECT_NE(b->lkey(), old_key);
}

TEST_F(MrTest, AccessRulesLikeIbverbs) {
  be.clear_log();
  auto expect_einval = [&](unsigned access) {
    try {
      dev.reg_mr(*pd, buf, 4096, access);
      ADD_FAILURE() << "access " << access << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), EINVAL);
    }
  };
  expect_einval(Access::RemoteWrite);
  expect_einval(Access::RemoteAtomic);
  expect_einval(Access::RemoteWrite | Access::RemoteRead);
  expect_einval(0x10);  // MW_BIND: unsupported
  EXPECT_TRUE(be.commands.empty()) << "a rejected registration reached the NIC";
  EXPECT_NO_THROW(dev.reg_mr(*pd, buf, 4096, Access::RemoteRead));
  EXPECT_NO_THROW(dev.reg_mr(*pd, buf, 4096,
                             Access::LocalWrite | Access::RemoteWrite | Access::RemoteAtomic));
  EXPECT_THROW(dev.reg_mr(*pd, buf, 0, Access::LocalWrite), Error);
  EXPECT_THROW(dev.reg_mr(*pd, ~0ull - 10, 4096, 0), Error);
}

TEST_F(MrTest, TableExhaustionAndFailedCommandReleaseTheEntry) {
  std::vector<std::unique_ptr<MemoryRegion>> mrs;
  for (uint32_t i = 0; i < dev.caps().max_mr; ++i) mrs.push_back(dev.reg_mr(*pd, buf, 64, 0));
  try {
    dev.reg_mr(*pd, buf, 64, 0);
    FAIL() << "MR table overcommitted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ENOMEM);
  }
  const uint32_t freed = mrs[7]->index();
  mrs[7].reset();
  be.fail_commands = 1;
  EXPECT_THROW(dev.reg_mr(*pd, buf, 64, 0), Error);
  auto mr = dev.reg_mr(*pd, buf, 64, 0);  // the failed attempt must not leak the entry
  EXPECT_EQ(mr->index(), freed);
}

TEST(Strings, EnumNames) {
  EXPECT_STREQ(to_string(WcStatus::Success), "success");
  EXPECT_STREQ(to_string(WcStatus::RetryExcErr), "transport retry counter exceeded");
  EXPECT_STREQ(to_string(WcStatus::WrFlushErr), "Work Request Flushed Error");
  EXPECT_STREQ(to_string(WcStatus(200)), "unknown");
  EXPECT_STREQ(to_string(WcOpcode::RecvRdmaWithImm), "RECV_RDMA_WITH_IMM");
  EXPECT_STREQ(to_string(WcOpcode(3)), "unknown");
  EXPECT_STREQ(to_string(WrOpcode::RdmaRead), "RDMA_READ");
  EXPECT_STREQ(to_string(QpState::Rtr), "RTR");
  EXPECT_EQ(attr_mask_string(QpAttrMask::DestQpn | QpAttrMask::RqPsn | QpAttrMask::State),
            "STATE,RQ_PSN,DEST_QPN");
  EXPECT_EQ(mtu_bytes(Mtu::Mtu256), 256u);
  EXPECT_EQ(mtu_bytes(Mtu::Mtu4096), 4096u);
  EXPECT_EQ(mtu_bytes(Mtu(0)), 0u);
}

TEST(Strings, AbiValuesMatchVerbs) {
  EXPECT_EQ(uint8_t(WrOpcode::SendWithImm), abi::WR_SEND_IMM);
  EXPECT_EQ(uint8_t(WcOpcode::RecvRdmaWithImm), abi::WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(uint8_t(WcStatus::RnrRetryExcErr), abi::WC_RNR_RETRY_EXC_ERR);
  EXPECT_EQ(unsigned(SendFlags::Signaled), abi::WQE_FLAG_SIGNALED);
  EXPECT_EQ(unsigned(Access::RemoteAtomic), abi::ACC_REMOTE_ATOMIC);
  EXPECT_EQ(uint8_t(QpState::Err), abi::QPS_ERR);
}

}  // namespace
}  // namespace srnic::sw
