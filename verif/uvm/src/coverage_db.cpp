// Covergroup bins as Verilator coverage points (VL_COVER_INSERT into a VerilatedCovContext).
#include "srnic/uvm/coverage_db.hpp"

#include <verilated_cov.h>

#include <string>

namespace srnic::verif::uvm {

namespace {
// VL_COVER_INSERT takes the hierarchy from name() in the calling scope.
class Inserter {
 public:
  Inserter(VerilatedCovContext& cov, const Covergroup& cg)
      : cov_(&cov), hier_(cg.hier()), page_("v_user/" + cg.name()), file_("uvm_cov/" + cg.name()) {}

  void insert(uint64_t* counter, const std::string& comment, uint32_t ordinal, uint32_t thresh) {
    const std::string line = std::to_string(ordinal);
    const std::string th = std::to_string(thresh);
    // Later duplicate keys win, so "filename" and "lineno" replace the macro's __FILE__/__LINE__.
    VL_COVER_INSERT(cov_, counter, "filename", file_.c_str(), "lineno", line.c_str(), "column",
                    "0", "page", page_.c_str(), "comment", comment.c_str(), "thresh", th.c_str());
  }

 private:
  const char* name() const { return hier_.c_str(); }

  VerilatedCovContext* cov_;
  std::string hier_;
  std::string page_;
  std::string file_;
};
}  // namespace

size_t register_coverage(VerilatedCovContext& cov, Covergroup& cg) {
  cg.freeze();
  cg.keep_counters_alive();
  Inserter ins(cov, cg);
  size_t n = 0;
  uint32_t ordinal = 0;
  for (CoverItem* item : cg.items()) {
    for (size_t b = 0; b < item->bins(); ++b) {
      if (item->bin_kind(b) != BinKind::Normal) continue;
      // Inserting zeroes the counter: keep what was counted before registration.
      const uint64_t before = *item->counter(b);
      ins.insert(item->counter(b), item->name() + ":" + item->bin_name(b), ++ordinal,
                 item->at_least());
      *item->counter(b) = before;
      ++n;
    }
  }
  return n;
}

}  // namespace srnic::verif::uvm
