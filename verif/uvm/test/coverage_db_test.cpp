// Covergroup bins in the Verilator coverage database: write a .dat, read it back (raw and via
// verilator_coverage --write-info), check names, keys and counts.
#include "srnic/uvm/coverage_db.hpp"

#include "srnic/uvm/component.hpp"

#include <gtest/gtest.h>
#include <verilated.h>
#include <verilated_cov.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>

namespace srnic::verif::uvm {
namespace {

using Keys = std::map<std::string, std::string>;

// Parses "C '<\1key\2value...>' count" lines of a SystemC::Coverage-3 file.
std::vector<std::pair<Keys, uint64_t>> read_dat(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::pair<Keys, uint64_t>> points;
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "# SystemC::Coverage-3");
  while (std::getline(in, line)) {
    if (line.rfind("C '", 0) != 0) continue;
    const size_t end = line.rfind('\'');
    const std::string body = line.substr(3, end - 3);
    Keys k;
    size_t pos = 0;
    while ((pos = body.find('\1', pos)) != std::string::npos) {
      const size_t sep = body.find('\2', pos);
      const size_t next = body.find('\1', sep);
      k[body.substr(pos + 1, sep - pos - 1)] = body.substr(sep + 1, next == std::string::npos ? std::string::npos : next - sep - 1);
      pos = sep;
    }
    points.emplace_back(k, std::stoull(line.substr(end + 2)));
  }
  return points;
}

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/uvm_vlcov_" + std::to_string(getpid()) + "_" + name;
}

std::map<std::string, uint64_t> by_comment(const std::vector<std::pair<Keys, uint64_t>>& pts,
                                           const std::string& page) {
  std::map<std::string, uint64_t> m;
  for (const auto& [k, n] : pts) {
    if (k.count("page") && k.at("page") == page) m[k.at("o")] = n;
  }
  return m;
}

struct CovDb : ::testing::Test {
  VerilatedContext vctx;
  std::ostringstream out;
  Context ctx{1, out};
  Component env{ctx, "env"};
};

TEST_F(CovDb, BinsAreWrittenWithPageCommentHierAndCounts) {
  auto cg = std::make_unique<Covergroup>("pkt_cg", &env);
  Coverpoint& op = cg->coverpoint("op");
  op.bin("send", 0).bin("write", 1).illegal("bad", 7, 7).default_bin();
  Coverpoint& len = cg->coverpoint("len");
  len.range("small", 0, 63).range("big", 64, 4096).at_least(3);
  cg->cross("op_len", {&op, &len});
  cg->sample({0, 10});  // counted before registration: kept
  EXPECT_EQ(register_coverage(*vctx.coveragep(), *cg), 2u + 2u + 4u);
  cg->sample({0, 10});
  cg->sample({1, 100});
  cg->sample({5, 100});  // default bin: not in the database

  const std::string path = temp_path("a.dat");
  vctx.coveragep()->write(path.c_str());
  const auto pts = read_dat(path);
  const auto m = by_comment(pts, "v_user/pkt_cg");
  EXPECT_EQ(m, (std::map<std::string, uint64_t>{{"op:send", 2},
                                                {"op:write", 1},
                                                {"len:small", 2},
                                                {"len:big", 2},
                                                {"op_len:send,small", 2},
                                                {"op_len:send,big", 0},
                                                {"op_len:write,small", 0},
                                                {"op_len:write,big", 1}}));
  for (const auto& [k, n] : pts) {
    EXPECT_EQ(k.at("h"), "env.pkt_cg");
    EXPECT_EQ(k.at("f"), "uvm_cov/pkt_cg");
    if (k.at("o") == "len:big") {
      EXPECT_EQ(k.at("s"), "3");  // at_least -> thresh
      EXPECT_EQ(k.at("l"), "4");  // 4th normal bin of the group
    }
  }

  // Zeroing the database zeroes the covergroup's counters (they are the same memory).
  vctx.coveragep()->zero();
  EXPECT_EQ(op.hits("send"), 0u);
  cg->sample({1, 5});
  cg.reset();  // the group may go away before the database is written
  const std::string path2 = temp_path("b.dat");
  vctx.coveragep()->write(path2.c_str());
  const auto m2 = by_comment(read_dat(path2), "v_user/pkt_cg");
  EXPECT_EQ(m2.at("op:write"), 1u);
  EXPECT_EQ(m2.at("op_len:write,small"), 1u);
  EXPECT_EQ(m2.at("op:send"), 0u);
  std::remove(path.c_str());
  std::remove(path2.c_str());
}

TEST_F(CovDb, VerilatorCoverageReadsThePoints) {
  const std::string tool = VERILATOR_COVERAGE_EXE;
  if (tool.empty()) GTEST_SKIP() << "verilator_coverage not installed";
  Covergroup cg("ops", &env);
  cg.coverpoint("op").bin("a", 0).bin("b", 1).bin("c", 2);
  register_coverage(*vctx.coveragep(), cg);
  for (int i = 0; i < 5; ++i) cg.sample({0});
  cg.sample({2});
  const std::string dat = temp_path("c.dat");
  const std::string rtl = temp_path("rtl.dat");
  const std::string merged = temp_path("m.dat");
  const std::string info = temp_path("c.info");
  vctx.coveragep()->write(dat.c_str());

  // A second run's file with an RTL line point, as a --coverage model writes it.
  VerilatedContext rtl_ctx;
  uint32_t line_hits = 0;
  rtl_ctx.coveragep()->_inserti(&line_hits);
  rtl_ctx.coveragep()->_insertf("rtl/top.sv", 7);
  rtl_ctx.coveragep()->_insertp("hier", "TOP.top", "page", "v_line/top", "comment", "block");
  line_hits = 9;
  rtl_ctx.coveragep()->write(rtl.c_str());

  // One merge holds both kinds; lcov output lists one line per bin.
  ASSERT_EQ(std::system((tool + " --write " + merged + " " + dat + " " + rtl + " >/dev/null").c_str()), 0);
  ASSERT_EQ(std::system((tool + " --write-info " + info + " " + merged + " >/dev/null").c_str()), 0);
  const auto mpts = read_dat(merged);
  EXPECT_EQ(by_comment(mpts, "v_user/ops"),
            (std::map<std::string, uint64_t>{{"op:a", 5}, {"op:b", 0}, {"op:c", 1}}));
  EXPECT_EQ(by_comment(mpts, "v_line/top"), (std::map<std::string, uint64_t>{{"block", 9}}));
  std::ifstream in(info);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string s = ss.str();
  EXPECT_NE(s.find("SF:uvm_cov/ops\n"), std::string::npos) << s;
  EXPECT_NE(s.find("DA:1,5\nDA:2,0\nDA:3,1\n"), std::string::npos) << s;
  EXPECT_NE(s.find("SF:rtl/top.sv\nDA:7,9\n"), std::string::npos) << s;
  std::remove(dat.c_str());
  std::remove(rtl.c_str());
  std::remove(merged.c_str());
  std::remove(info.c_str());
}

}  // namespace
}  // namespace srnic::verif::uvm
