// ReportServer: message format, per-component verbosity, counting, error limit, FATAL.
#include "srnic/uvm/report.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace srnic::verif::uvm {
namespace {

TEST(Report, LineCarriesTimeSeverityPathIdAndText) {
  std::ostringstream out;
  ReportServer rs(out);
  uint64_t now = 1234;
  rs.set_time_source([&] { return now; });
  rs.warning("env.sb", "LATE", "response late");
  EXPECT_EQ(out.str(), "WARNING @     1234: env.sb [LATE] response late\n");
}

TEST(Report, VerbosityIsPerComponentSubtreeLongestPrefixWins) {
  std::ostringstream out;
  ReportServer rs(out);
  rs.set_verbosity("env.agent", verbosity::kHigh);
  rs.set_verbosity("env.agent.mon", verbosity::kLow);
  EXPECT_EQ(rs.verbosity("env.agent.drv"), verbosity::kHigh);
  EXPECT_EQ(rs.verbosity("env.agent"), verbosity::kHigh);
  EXPECT_EQ(rs.verbosity("env.agent.mon.sub"), verbosity::kLow);
  EXPECT_EQ(rs.verbosity("env.agent2"), verbosity::kMedium);  // not below env.agent
  EXPECT_EQ(rs.verbosity("env"), verbosity::kMedium);

  rs.info("env.agent.drv", "A", "high one", verbosity::kHigh);   // printed
  rs.info("env.other", "B", "high one", verbosity::kHigh);       // filtered
  rs.info("env.agent.mon", "C", "medium one", verbosity::kMedium);  // filtered
  rs.info("env.other", "D", "low one", verbosity::kLow);         // printed
  EXPECT_NE(out.str().find("[A]"), std::string::npos);
  EXPECT_EQ(out.str().find("[B]"), std::string::npos);
  EXPECT_EQ(out.str().find("[C]"), std::string::npos);
  EXPECT_NE(out.str().find("[D]"), std::string::npos);
  EXPECT_EQ(rs.count(Severity::Info), 2u);  // filtered messages are not counted
  EXPECT_EQ(rs.count_id("B"), 0u);
}

TEST(Report, CountsPerSeverityAndId) {
  std::ostringstream out;
  ReportServer rs(out);
  rs.error("a", "X", "1");
  rs.error("b", "X", "2");
  rs.warning("a", "Y", "3");
  EXPECT_EQ(rs.count(Severity::Error), 2u);
  EXPECT_EQ(rs.count(Severity::Warning), 1u);
  EXPECT_EQ(rs.count_id("X"), 2u);
  EXPECT_EQ(rs.count_id("Y"), 1u);
  EXPECT_EQ(rs.failures(), 2u);
  rs.summary();
  EXPECT_NE(out.str().find("[X] 2"), std::string::npos);
  EXPECT_NE(out.str().find("ERROR   2"), std::string::npos);
}

TEST(Report, ErrorLimitRequestsStopOnTheNthError) {
  std::ostringstream out;
  ReportServer rs(out);
  rs.set_error_limit(3);
  rs.error("a", "E", "1");
  rs.error("a", "E", "2");
  rs.warning("a", "W", "warnings do not count");
  EXPECT_FALSE(rs.stop_requested());
  rs.error("a", "E", "3");
  EXPECT_TRUE(rs.stop_requested());
  EXPECT_NE(rs.stop_reason().find("error limit 3"), std::string::npos);
  rs.error("a", "E", "4");  // still counted after the stop request
  EXPECT_EQ(rs.count(Severity::Error), 4u);
}

TEST(Report, FatalIsCountedPrintedAndThrown) {
  std::ostringstream out;
  ReportServer rs(out);
  EXPECT_THROW(rs.fatal("env", "BAD", "cannot go on"), FatalError);
  EXPECT_EQ(rs.count(Severity::Fatal), 1u);
  EXPECT_EQ(rs.failures(), 1u);
  EXPECT_NE(out.str().find("FATAL   @"), std::string::npos);
  EXPECT_NE(out.str().find("[BAD] cannot go on"), std::string::npos);
}

}  // namespace
}  // namespace srnic::verif::uvm
