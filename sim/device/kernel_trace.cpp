#include "sim/device/kernel_trace.hpp"

#include <fmt/format.h>

#include "sim/device/kernel_context.hpp"

namespace cclmesh::sim::device {
namespace {

// "core (1,3) tensix (0,0) dm0" / "eth ch 6 erisc": the NoC0 core as in hang reports, then
// the logical core and the RISC-V.
std::string track_name_of(const KernelContext& k) {
  if (k.kind == runtime::CoreKind::Ethernet) return fmt::format("eth ch {} erisc", k.logical.x);
  return fmt::format("core ({},{}) tensix ({},{}) {}", k.noc0.x, k.noc0.y, k.logical.x, k.logical.y,
                     runtime::processor_name(k.processor));
}

// Ethernet cores first (their ERISC, then their wire: 2·ch, 2·ch + 1), then Tensix cores in
// logical row-major order, each RISC-V followed by its streams.
std::int64_t sort_index_of(const KernelContext& k) {
  if (k.kind == runtime::CoreKind::Ethernet) return 2 * static_cast<std::int64_t>(k.logical.x);
  const std::int64_t core = static_cast<std::int64_t>(k.logical.y) * 256 + k.logical.x;
  const auto riscv = static_cast<std::int64_t>(k.processor);
  return 100000 + (core * 3 + riscv) * 16;
}

// The opcode of a disassembled command ("stream 0 #2 WAIT_VALUE dest=..." -> "WAIT_VALUE").
std::string opcode_of(const std::string& disassembly, std::uint32_t command_index) {
  const std::string marker = fmt::format("#{} ", command_index);
  const std::size_t at = disassembly.find(marker);
  if (at == std::string::npos) return fmt::format("command #{}", command_index);
  const std::size_t begin = at + marker.size();
  const std::size_t end = disassembly.find(' ', begin);
  return disassembly.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

KernelTrace::KernelTrace(trace::TraceRecorder& recorder, const KernelContext& kernel)
    : recorder_(recorder),
      chip_(kernel.chip->id()),
      track_name_(track_name_of(kernel)),
      sort_index_(sort_index_of(kernel)),
      kernel_name_(kernel.kernel),
      workload_(kernel.persistent ? "fabric (persistent)" : kernel.workload),
      track_(recorder.track(chip_, track_name_, sort_index_)) {}

void KernelTrace::started(SimTime now) {
  trace::SpanArgs args;
  args.text_key = "workload";
  args.text = workload_;
  run_ = recorder_.begin(track_, now, kernel_name_, args);
}

void KernelTrace::finished(SimTime now) {
  for (StreamState& s : streams_) {
    if (!s.open) continue;
    recorder_.end(s.span, now);
    s.open = false;
  }
  recorder_.end(run_, now);
}

KernelTrace::StreamState& KernelTrace::stream_state(std::uint32_t stream) {
  if (stream >= streams_.size()) streams_.resize(stream + 1);
  StreamState& s = streams_[stream];
  if (!s.has_track) {
    s.track = recorder_.track(chip_, fmt::format("{} stream {}", track_name_, stream),
                              sort_index_ + 1 + static_cast<std::int64_t>(stream));
    s.has_track = true;
  }
  return s;
}

void KernelTrace::command_reported(const KernelContext& kernel, std::uint32_t stream, std::uint32_t command_index,
                                   SimTime now) {
  StreamState& s = stream_state(stream);
  if (s.open && s.command_index == command_index) return;  // another attempt at the same command
  if (s.open) recorder_.end(s.span, now);                   // a kernel that never reported it done
  const std::string disassembly = kernel.current_command();
  trace::SpanArgs args;
  args.text_key = "command";
  args.text = disassembly;
  args.number_key[0] = "stream";
  args.number[0] = stream;
  args.number_key[1] = "index";
  args.number[1] = command_index;
  s.span = recorder_.begin(s.track, now, opcode_of(disassembly, command_index), args);
  s.open = true;
  s.command_index = command_index;
}

void KernelTrace::command_done(std::uint32_t stream, std::uint32_t command_index, SimTime now) {
  if (stream >= streams_.size()) return;
  StreamState& s = streams_[stream];
  if (!s.open || s.command_index != command_index) return;
  recorder_.end(s.span, now);
  s.open = false;
}

}  // namespace cclmesh::sim::device
