// PSN arithmetic, AETH syndrome helpers and the opcode table.
#include <gtest/gtest.h>

#include <cstring>

#include "srnic/roce/aeth.hpp"
#include "srnic/roce/opcode.hpp"
#include "srnic/roce/psn.hpp"

namespace srnic::roce {
namespace {

TEST(Psn, WrapAndCompare) {
  EXPECT_EQ(psn_add(0xFFFFFF, 1), 0u);
  EXPECT_EQ(psn_add(0xFFFFFE, 5), 3u);
  EXPECT_EQ(psn_diff(0, 0xFFFFFF), 1);
  EXPECT_EQ(psn_diff(0xFFFFFF, 0), -1);
  EXPECT_TRUE(psn_lt(0xFFFFF0, 0x10));
  EXPECT_TRUE(psn_gt(0x10, 0xFFFFF0));
  EXPECT_EQ(psn_compare(5, 5), 0);
  EXPECT_EQ(psn_diff(0x7FFFFF, 0), 0x7FFFFF);
  EXPECT_EQ(psn_diff(0x800000, 0), -0x800000);  // exactly half way counts as "before"
  EXPECT_TRUE(psn_le(3, 3));
  EXPECT_TRUE(psn_ge(3, 3));
}

TEST(Psn, ReadPsnCount) {
  EXPECT_EQ(read_psn_count(0, 1024), 1u);
  EXPECT_EQ(read_psn_count(1, 1024), 1u);
  EXPECT_EQ(read_psn_count(1024, 1024), 1u);
  EXPECT_EQ(read_psn_count(1025, 1024), 2u);
  EXPECT_EQ(read_psn_count(4096, 256), 16u);
}

TEST(Aeth, SyndromeFields) {
  EXPECT_EQ(aeth_type(0x1F), AckType::Ack);
  EXPECT_EQ(aeth_type(0x2C), AckType::RnrNak);
  EXPECT_EQ(aeth_value(0x2C), 12);
  EXPECT_EQ(aeth_type(0x62), AckType::Nak);
  EXPECT_EQ(aeth_value(0x62), 2);
  EXPECT_EQ(make_ack_syndrome(kCreditInvalid), 0x1F);
  EXPECT_EQ(make_rnr_syndrome(12), 0x2C);
  EXPECT_EQ(make_nak_syndrome(NakCode::PsnSequenceError), 0x60);
  EXPECT_EQ(make_nak_syndrome(NakCode::RemoteAccessError), 0x62);
  EXPECT_EQ(make_nak_syndrome(NakCode::RemoteOperationalError), 0x63);
  EXPECT_STREQ(nak_code_name(1), "INVALID_REQUEST");
}

TEST(Aeth, CreditTable) {
  EXPECT_EQ(credit_count(0), 0);
  EXPECT_EQ(credit_count(5), 6);
  EXPECT_EQ(credit_count(0x0F), 192);
  EXPECT_EQ(credit_count(0x1E), 32768);
  EXPECT_EQ(credit_count(0x1F), -1);
  EXPECT_EQ(credit_code_for(0), 0);
  EXPECT_EQ(credit_code_for(5), 4);   // 6 would be too many
  EXPECT_EQ(credit_code_for(6), 5);
  EXPECT_EQ(credit_code_for(1000), 0x13);  // 768
  EXPECT_EQ(credit_code_for(1u << 20), 0x1E);
}

TEST(Aeth, RnrTimerTable) {
  EXPECT_EQ(rnr_timer_us(0), 655360u);
  EXPECT_EQ(rnr_timer_us(1), 10u);
  EXPECT_EQ(rnr_timer_us(12), 640u);
  EXPECT_EQ(rnr_timer_us(25), 61440u);
  EXPECT_EQ(rnr_timer_us(31), 491520u);
  EXPECT_EQ(rnr_code_for_us(640), 12);
  EXPECT_EQ(rnr_code_for_us(641), 13);
  EXPECT_EQ(rnr_code_for_us(600000), 0);
  EXPECT_EQ(ack_timeout_ns(0), 0u);
  EXPECT_EQ(ack_timeout_ns(1), 8192u);
  EXPECT_EQ(ack_timeout_ns(14), 67108864u);
}

TEST(Opcode, RcTable) {
  const OpcodeInfo* w = opcode_info(op::kRcWriteOnlyImm);
  ASSERT_NE(w, nullptr);
  EXPECT_STREQ(w->name, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
  EXPECT_EQ(w->headers, kHdrReth | kHdrImmDt);
  EXPECT_EQ(w->header_len, 20);
  EXPECT_EQ(w->position, Position::Only);
  EXPECT_TRUE(w->is_request);
  EXPECT_TRUE(w->consumes_rwqe);
  EXPECT_TRUE(w->completes_rwqe);

  const OpcodeInfo* m = opcode_info(op::kRcReadResponseMiddle);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->headers, 0);  // no AETH on MIDDLE
  EXPECT_TRUE(m->is_response);
  EXPECT_EQ(opcode_info(op::kRcReadResponseFirst)->headers, kHdrAeth);
  EXPECT_FALSE(opcode_info(op::kRcReadRequest)->has_payload);
  EXPECT_EQ(opcode_info(op::kRcReadRequest)->header_len, 16);
  EXPECT_EQ(opcode_info(op::kRcAtomicAck)->header_len, 12);
  EXPECT_EQ(opcode_info(op::kRcCompareSwap)->header_len, 28);
  EXPECT_EQ(opcode_info(op::kRcFlush)->header_len, 20);
  EXPECT_TRUE(opcode_info(op::kRcSendFirst)->consumes_rwqe);
  EXPECT_FALSE(opcode_info(op::kRcSendFirst)->completes_rwqe);
  EXPECT_TRUE(opcode_info(op::kRcSendLast)->completes_rwqe);
  EXPECT_FALSE(opcode_info(op::kRcWriteLast)->completes_rwqe);
  EXPECT_EQ(opcode_info(0x15), nullptr);
  EXPECT_EQ(opcode_info(0x40), nullptr);  // RD is not supported
  EXPECT_STREQ(opcode_name(0x15), "UNKNOWN_0x15");
}

TEST(Opcode, EveryRcOpcodeIsPresentAndConsistent) {
  int n = 0;
  for (int c = 0; c < 0x20; ++c) {
    const OpcodeInfo* i = opcode_info(uint8_t(c));
    if (!i) continue;
    ++n;
    EXPECT_EQ(i->code, c);
    EXPECT_EQ(i->transport, Transport::RC);
    EXPECT_EQ(std::strncmp(i->name, "RC_", 3), 0);
    EXPECT_NE(i->is_request, i->is_response) << i->name;
    EXPECT_EQ(i->header_len, header_len(i->headers));
    if (i->is_response) {
      EXPECT_FALSE(i->consumes_rwqe);
    }
  }
  EXPECT_EQ(n, 25);  // 0x00-0x14, 0x16, 0x17, 0x1C, 0x1D
}

TEST(Opcode, UcUdCnp) {
  EXPECT_STREQ(opcode_name(0x24), "UC_SEND_ONLY");
  EXPECT_EQ(opcode_info(0x24)->transport, Transport::UC);
  EXPECT_EQ(opcode_info(0x2B)->headers, kHdrReth | kHdrImmDt);
  EXPECT_EQ(opcode_info(0x2C), nullptr);  // UC has no READ
  EXPECT_EQ(opcode_info(op::kUdSendOnlyImm)->headers, kHdrDeth | kHdrImmDt);
  EXPECT_EQ(opcode_info(op::kCnp)->header_len, 16);
  EXPECT_STREQ(opcode_name(op::kCnp), "CNP");
}

}  // namespace
}  // namespace srnic::roce
