#pragma once
// Pieces the interpreter-based op builders share: the CB and semaphore ids they use, the
// KernelSpec of a command interpreter on one core, packet sizing, whole-buffer slices, and the
// host side of running a workload on a device. Pure functions: no device, no engine.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/api/tensor_slice.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"

namespace cclmesh::runtime::ccl {

// A params struct an op cannot run with (bad input): the message names the field and value.
class CclParamsError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A page larger than the fabric packet's payload (FabricOptions' maximum): a CclParamsError the
// caller can name by the option that set the payload (the CLI's --fabric-payload), or, for a
// page above kMaxFabricPayloadBytes that no payload holds, by the options that set the page.
class PageExceedsPacketError : public CclParamsError {
 public:
  // From a message alone (a served device's refusal, remote_protocol.cpp): the page size unknown.
  explicit PageExceedsPacketError(const std::string& message) : CclParamsError(message) {}
  // Another message for a page known (all_reduce's, in its own name: half_refusal.hpp).
  PageExceedsPacketError(const std::string& message, std::uint32_t page_size_bytes)
      : CclParamsError(message), page_size_bytes_(page_size_bytes) {}
  PageExceedsPacketError(std::uint32_t page_size_bytes, std::uint32_t max_payload_bytes);

  // The page that did not fit; 0 when unknown.
  std::uint32_t page_size_bytes() const { return page_size_bytes_; }

 private:
  std::uint32_t page_size_bytes_ = 0;
};

// A ring group the device's fabric runs as a line around a down link, asked of an op that does
// not build ring and line groups apart (place_groups): a CclParamsError the caller can report as
// the fault that caused it. The op would run with the fabric laid as lines (--topology line),
// which the message suggests; a caller that cannot lay the fabric itself (a served device's
// client) names who can. (Every op builds its ring and line groups apart since session 21.)
class RingRunsAsLineError : public CclParamsError {
 public:
  using CclParamsError::CclParamsError;
};

// More links asked (num_links) than a hop of a group has: a CclParamsError the caller can name by
// the option that set the links (the CLI's --links), with the links the group allows. (Bug bash,
// session 44: a torus row with one hop of 1 link, run along its axis on --links 2, was refused as
// "all_gather: num_links 2 is more than ...", naming no option.)
class TooFewLinksError : public CclParamsError {
 public:
  // From a message alone (a served device's refusal): the links allowed unknown.
  explicit TooFewLinksError(const std::string& message) : CclParamsError(message) {}
  TooFewLinksError(const std::string& message, std::uint32_t links_allowed)
      : CclParamsError(message), links_allowed_(links_allowed) {}

  // The links of the group's hop with the fewest: the most num_links may be; 0 when unknown.
  std::uint32_t links_allowed() const { return links_allowed_; }

 private:
  std::uint32_t links_allowed_ = 0;
};

inline constexpr std::uint32_t kDataCbId = 0;
// Scratch for the interpreter's fabric packet headers (kargs: 8 x 32 B).
inline constexpr std::uint32_t kPacketHeaderCbId = 31;
// Per-program semaphores: "the data has landed" on a receiving worker, and the three worker
// semaphores of each fabric connection.
inline constexpr std::uint32_t kDoneSemaphoreId = 0;
inline constexpr std::uint32_t kForwardConnectionSemaphoreIds[3] = {1, 2, 3};
inline constexpr std::uint32_t kBackwardConnectionSemaphoreIds[3] = {4, 5, 6};

// The command interpreter on `core` with `spec`'s arguments (by default RISC-V 0 on NoC0).
KernelSpec interpreter_kernel(CoreCoord core, const kargs::InterpreterSpec& spec,
                              DataMovementProcessor processor = DataMovementProcessor::Riscv0,
                              NocIndex noc = NocIndex::Noc0);

// The two streams of a copy through `core`'s data CB: a reader (tensor -> CB) and a writer
// (CB -> tensor, locally or over the fabric; `writer_base` carries its packet size, semaphore
// ids and fabric connections). Split: two one-stream interpreters, the reader on RISC-V 1 /
// NoC1 and the writer on RISC-V 0 / NoC0, so reads and writes overlap as tt-metal's reader
// and writer kernels do. Not split: one interpreter running both streams round robin
// (REFERENCE 4.8), which serialises a read barrier and a write flush per packet.
void add_copy_kernels(Program& program, CoreCoord core, const kargs::InterpreterSpec& writer_base,
                      const kargs::InterpreterStreamSpec& reader, const kargs::InterpreterStreamSpec& writer,
                      bool split);
// The kernels of a worker that sends one slice run: with data, a reader streaming `run` of
// `input` into the data CB and `writer`, through add_copy_kernels; timing-only (no data to
// move), the writer stream alone on one interpreter.
void add_slice_copy_kernels(Program& program, CoreCoord core, kargs::InterpreterSpec spec,
                            const kargs::TensorArgs& input, const api::TensorSlice& run,
                            const kargs::InterpreterStreamSpec& writer, bool split, bool has_data);
// The packet-header CB and a data CB of `pages` pages on `core`.
CircularBufferSpec packet_header_cb(CoreCoord core);
CircularBufferSpec data_cb(CoreCoord core, std::uint32_t page_size_bytes, std::uint32_t pages);
// A semaphore on one Tensix core, initially 0.
SemaphoreSpec tensix_semaphore(CoreCoord core, std::uint32_t id);

// Connects the interpreter `spec` on `core` of `chip` to its chip's routers on `port`'s line and
// routing plane in the directions it sends: each connection block, and its three per-program
// semaphores (k{Forward,Backward}ConnectionSemaphoreIds) in `program`.
void connect_to_fabric(Program& program, kargs::InterpreterSpec& spec, const FabricPlan& plan, const FabricPort& port,
                       ChipId chip, CoreCoord core, bool forward, bool backward);

// Pages per fabric packet: `requested`, or when 0 as many pages as `max_payload_bytes` holds
// (at least 1). Throws PageExceedsPacketError when a page does not fit the payload.
std::uint32_t packet_size_in_pages(std::uint32_t requested, std::uint32_t page_size_bytes,
                                   std::uint32_t max_payload_bytes);
// The whole buffer as one worker's slice of a (1, 1, 1, pages) tensor.
api::TensorSlice whole_buffer_slice(const BufferHandle& buffer);

// Checks a buffer pair for a copy: same size and page size (CclParamsError otherwise).
void require_same_shape(const BufferHandle& input, const BufferHandle& output, const std::string& op);
// Checks that `core` is in the worker grid every chip of the topology has.
void require_worker_core(const topo::Topology& topology, CoreCoord core, const std::string& op);

// Enqueues the workload and waits for it: the only way an op touches a device.
void run_workload(MeshDevice& device, const MeshWorkload& workload);

}  // namespace cclmesh::runtime::ccl
