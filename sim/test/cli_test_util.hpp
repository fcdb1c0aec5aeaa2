// Helpers of the srnic-sim command-line tests: parse an argument list as srnic-sim would, check a
// refusal (one line, exit status 2, naming the problem, with the command that reproduces it),
// and split a reproducing command back into arguments.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "workload_cli.hpp"

namespace srnic::sim::test {

// What fn(FILE*) prints, as a string.
template <typename Fn>
inline std::string printed(Fn fn) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  fn(f);
  std::fclose(f);
  std::string s(buf, len);
  std::free(buf);
  return s;
}


inline std::string command(const std::vector<std::string>& args) {
  std::string c = "srnic-sim";
  for (const auto& a : args) c += " " + a;
  return c;
}

inline CliResult parse(std::vector<std::string> args, RunConfig& cfg) {
  args.insert(args.begin(), "srnic-sim");
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  return parse_cli(static_cast<int>(argv.size()), argv.data(), cfg);
}

// The arguments of a reproducing command ("srnic-sim --op write ..."), split at spaces.
inline std::vector<std::string> words(const std::string& cmd) {
  std::vector<std::string> w;
  std::string cur;
  for (char c : cmd.substr(cmd.find(' ') + 1)) {
    if (c == ' ') {
      w.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  w.push_back(cur);
  return w;
}

// args must be refused: exit status 2, one line starting "srnic-sim: " that contains needle.
inline void expect_usage_error(const std::vector<std::string>& args, const std::string& needle) {
  RunConfig cfg;
  const CliResult r = parse(args, cfg);
  const std::string repro = "reproduce: " + command(args);
  EXPECT_FALSE(r.run) << repro;
  EXPECT_EQ(r.code, 2) << repro << "\n" << r.message;
  EXPECT_EQ(r.message.find('\n'), std::string::npos) << repro << "\n" << r.message;
  EXPECT_EQ(r.message.rfind("srnic-sim: ", 0), 0u) << repro << "\n" << r.message;
  EXPECT_NE(r.message.find(needle), std::string::npos) << repro << "\nmessage: " << r.message << "\nwanted: " << needle;
}

}  // namespace srnic::sim::test
