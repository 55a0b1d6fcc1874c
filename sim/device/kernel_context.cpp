#include "sim/device/kernel_context.hpp"

#include <fmt/format.h>

#include "kernels/api/fabric_connection.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/device/l1_map.hpp"
#include "sim/engine/check.hpp"
#include "sim/engine/fiber.hpp"

namespace cclmesh::sim::device {
namespace {

// "semaphore id 3 at 0x20030" when the address is a per-program semaphore of this core's kind.
std::string word_name(const KernelContext& k, std::uint64_t address) {
  const std::uint64_t base = k.kind == runtime::CoreKind::Tensix ? runtime::kTensixProgramBase
                                                                 : k.erisc_l1.unreserved_base();
  if (address >= base && address < base + runtime::kProgramSemaphoreBytes && address % runtime::kProgramSemaphoreStride == 0) {
    return fmt::format("semaphore id {} at {:#x}", (address - base) / runtime::kProgramSemaphoreStride, address);
  }
  return fmt::format("L1 word {:#x}", address);
}

std::string current_word(const KernelContext& k, std::uint64_t address) {
  try {
    return fmt::format("{}", k.l1->read_u32(address));
  } catch (const std::exception&) {
    return "unreadable";
  }
}

// The data mover a worker's fabric connection reaches at NoC0 (x, y): its router on an ethernet
// core, or a fabric mux on a Tensix core that feeds one (REFERENCE 6.3; the connection's
// arguments do not say which, the core does).
std::string connection_peer(const KernelContext& k, std::uint32_t x, std::uint32_t y) {
  const bool ethernet = k.chip != nullptr &&
                        k.chip->eth_at(CoreCoord{static_cast<std::int32_t>(x), static_cast<std::int32_t>(y)}) != nullptr;
  return fmt::format("{} at NoC0 ({},{})", ethernet || k.chip == nullptr ? "router" : "fabric mux", x, y);
}

// What a semaphore an interpreter waits on means when it belongs to one of its fabric
// connections (the worker side of fabric_connection.hpp): ": a free slot in ..." or "".
std::string connection_role(const KernelContext& k, std::uint64_t address) {
  if (k.kernel != kernels::kCclInterpreterKernelName || k.kind != runtime::CoreKind::Tensix) return "";
  namespace ia = kernels::interpreter;
  namespace ca = api::fabric_connection_arg;
  const std::vector<std::uint32_t>& rt = k.runtime_args;
  for (const std::uint32_t slot : {ia::kRtForwardConnectionOffset, ia::kRtBackwardConnectionOffset}) {
    if (rt.size() <= slot) continue;
    const std::uint64_t at = rt[slot];
    if (at == 0 || at + api::kFabricConnectionArgWords > rt.size()) continue;
    const char* direction = slot == ia::kRtForwardConnectionOffset ? "forward" : "backward";
    const auto sem = [&](std::uint32_t word) { return runtime::tensix_program_semaphore_address(rt[at + word]); };
    if (address == sem(ca::kWorkerFlowControlSemaphore)) {
      return fmt::format(": a free slot in the {} fabric connection's sender channel ({} slots, {})", direction,
                         rt[at + ca::kNumSlots], connection_peer(k, rt[at + ca::kEdmNocX], rt[at + ca::kEdmNocY]));
    }
    if (address == sem(ca::kWorkerTeardownSemaphore)) {
      return fmt::format(": the {} connection's close acknowledgement ({})", direction,
                         connection_peer(k, rt[at + ca::kEdmNocX], rt[at + ca::kEdmNocY]));
    }
  }
  return "";
}

std::string cb_state(const KernelContext& k, std::uint64_t cb_id) {
  if (k.core == nullptr) return "no CBs";
  const auto it = k.core->cbs.find(static_cast<std::uint32_t>(cb_id));
  return it == k.core->cbs.end() ? "no such CB" : it->second->state();
}

}  // namespace

const char* blocked_in_name(BlockedIn what) {
  switch (what) {
    case BlockedIn::Nothing: return "not blocked";
    case BlockedIn::SemaphoreEqual: return "noc_semaphore_wait";
    case BlockedIn::SemaphoreAtLeast: return "noc_semaphore_wait_min";
    case BlockedIn::CbReserve: return "cb_reserve_back";
    case BlockedIn::CbWait: return "cb_wait_front";
    case BlockedIn::ReadBarrier: return "read barrier";
    case BlockedIn::WriteBarrier: return "write barrier";
    case BlockedIn::WritesFlushed: return "writes flushed";
    case BlockedIn::AtomicBarrier: return "atomic barrier";
    case BlockedIn::L1Activity: return "waiting for L1 activity";
  }
  return "?";
}

std::string KernelContext::name() const {
  if (kind == runtime::CoreKind::Ethernet) {
    return fmt::format("chip {} core ({},{}) [eth ch {}] {}", chip->id(), noc0.x, noc0.y, logical.x, kernel);
  }
  return fmt::format("chip {} core ({},{}) [tensix ({},{}) {}] {}", chip->id(), noc0.x, noc0.y, logical.x, logical.y,
                     runtime::processor_name(processor), kernel);
}

std::string KernelContext::current_command() const {
  if (!has_command) return "";
  if (kernel == kernels::kCclInterpreterKernelName) {
    return kargs::describe_interpreter_command(runtime_args, stream, command_index);
  }
  return fmt::format("stream {} #{}", stream, command_index);
}

std::string KernelContext::blocked_description() const {
  const auto noc_name = [this] { return fmt::format("NoC{}", blocked_a); };
  switch (blocked) {
    case BlockedIn::Nothing: return "";
    case BlockedIn::SemaphoreEqual:
      return fmt::format("noc_semaphore_wait({} == {}, now {}{})", word_name(*this, blocked_a), blocked_b,
                         current_word(*this, blocked_a), connection_role(*this, blocked_a));
    case BlockedIn::SemaphoreAtLeast:
      return fmt::format("noc_semaphore_wait_min({} >= {}, now {}{})", word_name(*this, blocked_a), blocked_b,
                         current_word(*this, blocked_a), connection_role(*this, blocked_a));
    case BlockedIn::CbReserve:
      return fmt::format("cb_reserve_back(CB {}, {} pages; {})", blocked_a, blocked_b, cb_state(*this, blocked_a));
    case BlockedIn::CbWait:
      return fmt::format("cb_wait_front(CB {}, {} pages; {})", blocked_a, blocked_b, cb_state(*this, blocked_a));
    case BlockedIn::ReadBarrier: return fmt::format("noc_async_read_barrier({})", noc_name());
    case BlockedIn::WriteBarrier: return fmt::format("noc_async_write_barrier({})", noc_name());
    case BlockedIn::WritesFlushed: return fmt::format("noc_async_writes_flushed({})", noc_name());
    case BlockedIn::AtomicBarrier: return fmt::format("noc_async_atomic_barrier({})", noc_name());
    case BlockedIn::L1Activity:
      if (blocked_a != kAnyActivity) {
        return fmt::format("wait_for_activity (waiting for {})", describe_activity_mask(static_cast<ActivityMask>(blocked_a)));
      }
      return eth != nullptr ? "wait_for_l1_activity (no L1 write, NoC completion, CB change or TX queue drain)"
                            : "wait_for_l1_activity (no L1 write, NoC completion or CB change)";
  }
  return "";
}

std::string KernelContext::failure_description() const {
  std::string text;
  if (fault) {
    text = kargs::describe_kernel_fault(kernel, runtime_args, fault->code, fault->command_index, fault->word_offset);
    if (!fault->detail.empty()) text += "; " + fault->detail;
  } else {
    text = error;
    const std::string command = current_command();
    if (!command.empty()) text += " (while executing " + command + ")";
  }
  return text;
}

void fail_outside_kernel() {
  fail_invariant("fiber != nullptr && fiber->user_context() != nullptr",
                 "a dataflow API function was called outside a simulated kernel", __FILE__, __LINE__);
}

}  // namespace cclmesh::sim::device
