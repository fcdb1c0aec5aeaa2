// Context and Component: tree bookkeeping, path lookup and objections.
#include "srnic/uvm/component.hpp"

#include <algorithm>
#include <ostream>
#include <stdexcept>

namespace srnic::verif::uvm {

const char* to_string(Phase p) {
  switch (p) {
    case Phase::Construct: return "construct";
    case Phase::Build: return "build";
    case Phase::Connect: return "connect";
    case Phase::Run: return "run";
    case Phase::Check: return "check";
    case Phase::Report: return "report";
    case Phase::Done: return "done";
  }
  return "?";
}

Context::Context(uint64_t seed, std::ostream& out) : seed_(seed), root_rng_(seed), reports_(out) {
  reports_.set_time_source([this] { return cycle_; });
}

bool Context::has_plusarg(std::string_view name) const {
  for (const auto& [n, v] : plusargs_)
    if (n == name) return true;
  return false;
}

std::string Context::plusarg(std::string_view name, std::string_view def) const {
  for (auto it = plusargs_.rbegin(); it != plusargs_.rend(); ++it)
    if (it->first == name) return it->second;
  return std::string(def);
}

uint64_t Context::plusarg_u64(std::string_view name, uint64_t def) const {
  if (!has_plusarg(name)) return def;
  const std::string v = plusarg(name);
  size_t used = 0;
  uint64_t x = 0;
  try {
    x = std::stoull(v, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (v.empty() || used != v.size())
    throw std::invalid_argument("plusarg +" + std::string(name) + "=" + v + " is not a number");
  return x;
}

Component* Context::find(std::string_view path) const {
  const size_t dot = path.find('.');
  const std::string_view head = path.substr(0, dot);
  for (Component* top : tops_) {
    if (top->name() != head) continue;
    return dot == std::string_view::npos ? top : top->find(path.substr(dot + 1));
  }
  return nullptr;
}

Component::Component(Context& ctx, std::string name)
    : ctx_(&ctx), parent_(nullptr), name_(std::move(name)) {
  init(name_);
  ctx_->tops_.push_back(this);
}

Component::Component(Component& parent, std::string name)
    : ctx_(parent.ctx_), parent_(&parent), name_(std::move(name)) {
  init(name_);
  parent_->children_.push_back(this);
}

void Component::init(std::string name) {
  if (name.empty() || name.find('.') != std::string::npos) {
    throw std::invalid_argument("component name '" + name + "' is empty or contains '.'");
  }
  if (ctx_->phase_ != Phase::Construct && ctx_->phase_ != Phase::Build) {
    throw std::logic_error("component '" + name + "' created after the build phase");
  }
  const auto& siblings = parent_ ? parent_->children_ : ctx_->tops_;
  for (const Component* s : siblings) {
    if (s->name_ == name) throw std::invalid_argument("duplicate component name '" + name + "'");
  }
  path_ = parent_ ? parent_->path_ + "." + name : name;
  rng_ = ctx_->stream(path_);
}

Component::~Component() {
  owned_.clear();  // owned children unregister themselves while this base is still whole
  auto& list = parent_ ? parent_->children_ : ctx_->tops_;
  list.erase(std::remove(list.begin(), list.end(), this), list.end());
  if (objections_ != 0) ctx_->objections_ -= objections_;
}

Component* Component::find(std::string_view rel_path) const {
  const Component* c = this;
  while (!rel_path.empty()) {
    const size_t dot = rel_path.find('.');
    const std::string_view head = rel_path.substr(0, dot);
    const Component* next = nullptr;
    for (const Component* ch : c->children_) {
      if (ch->name_ == head) {
        next = ch;
        break;
      }
    }
    if (!next) return nullptr;
    c = next;
    rel_path = dot == std::string_view::npos ? std::string_view() : rel_path.substr(dot + 1);
  }
  return const_cast<Component*>(c);
}

void Component::raise_objection(uint64_t n) {
  objections_ += n;
  ctx_->objections_ += n;
}

void Component::drop_objection(uint64_t n) {
  if (n > objections_) {
    error("OBJECTION", "dropped " + std::to_string(n) + " objection(s) but holds only " +
                           std::to_string(objections_));
    n = objections_;
  }
  objections_ -= n;
  ctx_->objections_ -= n;
}

void Component::print_tree(std::ostream& os, int indent) const {
  os << std::string(static_cast<size_t>(indent) * 2, ' ') << name_ << '\n';
  for (const Component* c : children_) c->print_tree(os, indent + 1);
}

}  // namespace srnic::verif::uvm
