#pragma once
// Host side of kernel_args.hpp: builds each kernel's compile-time and runtime args from plain
// structs, and validates them with the same device-clean parsers the kernels run, so a
// builder can only produce args the kernel accepts. Also: the router's slot sizing from ERISC
// L1 (REFERENCE §6.2), connection blocks for workers, and readable kernel-fault messages.

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "kernels/api/addrgen.hpp"
#include "kernels/api/ccl_command.hpp"
#include "kernels/api/fabric_connection.hpp"
#include "kernels/api/legacy_edm_interface.hpp"
#include "kernels/kernel_args.hpp"

namespace cclmesh::kargs {

class KernelArgsError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct KernelArgs {
  std::vector<uint32_t> compile_time;
  std::vector<uint32_t> runtime;
};

// ---- Command interpreter ----------------------------------------------------------------------
struct InterleavedTensorArgs {
  uint32_t address = 0;
  uint32_t page_size_bytes = 0;
  api::BufferType buffer_type = api::BufferType::DRAM;
  uint32_t num_banks = 0;
  uint32_t aligned_page_size_bytes = 0;  // bank stride of one buffer page (>= page size)
  // > 1: page_size_bytes is one of this many pieces of a buffer page (a ROW_MAJOR row written
  // a part at a time; api::InterleavedAddrGenParams), the last `last_piece_bytes` long (0: as
  // the others).
  uint32_t pieces_per_page = 1;
  uint32_t last_piece_bytes = 0;
  // Host-side only, not a kernel arg: the pages of the buffer the generator addresses (0:
  // unknown, not checked). build_interpreter_args refuses a streaming command whose run reaches
  // a page past them, which the device would write or read outside the buffer, silently.
  uint32_t buffer_pages = 0;
};

struct NocCoord {
  uint32_t x = 0;
  uint32_t y = 0;
};

struct ShardedTensorArgs {
  uint32_t address = 0;  // the shard base, the same on every core
  uint32_t page_size_bytes = 0;
  api::BufferType buffer_type = api::BufferType::L1;
  api::TensorMemoryLayout layout = api::TensorMemoryLayout::HEIGHT_SHARDED;
  uint32_t page_stride_bytes = 0;
  uint32_t pages_per_tensor_row = 0;
  api::ShardingContiguityMode contiguity = api::ShardingContiguityMode::NO_SHARD_PADDING;
  uint32_t pages_per_shard_width = 0;
  uint32_t rows_per_shard_height = 0;
  std::vector<NocCoord> cores;  // shard order, NoC0
  // > 1: page_size_bytes is one of this many pieces of a buffer page (api::ShardedAddrGenParams),
  // the last `last_piece_bytes` long (0: as the others).
  uint32_t pieces_per_page = 1;
  uint32_t last_piece_bytes = 0;
  uint32_t buffer_pages = 0;  // host-side only, as InterleavedTensorArgs::buffer_pages
};

using TensorArgs = std::variant<InterleavedTensorArgs, ShardedTensorArgs>;

struct InterpreterStreamSpec {
  std::optional<TensorArgs> tensor;  // the tensor a streaming command of this stream moves
  std::vector<uint32_t> commands;    // encoded stream (cmd::encode_stream)
  uint32_t num_commands = 0;
};

struct InterpreterSpec {
  uint32_t packet_header_cb_id = 0;
  uint32_t packet_size_in_pages = 1;
  std::vector<uint32_t> semaphore_ids;  // per-program semaphores on this core the streams use
  std::optional<api::FabricConnectionConfig> forward_connection;   // worker sems as ids
  std::optional<api::FabricConnectionConfig> backward_connection;  // worker sems as ids
  std::vector<InterpreterStreamSpec> streams;                      // 1 or 2
};

// Also refuses (KernelArgsError) a stream whose streaming command's run reaches a tensor page
// past its tensor args' buffer_pages (times pieces_per_page) when those are known.
KernelArgs build_interpreter_args(const InterpreterSpec& spec);

// Runtime-arg index of stream `stream`'s tensor address (patched on a program-cache hit).
constexpr uint32_t interpreter_tensor_address_arg(uint32_t stream) {
  return kernels::interpreter::stream_block(stream) + kernels::interpreter::kStreamTensorAddress;
}

// ---- Fabric router ----------------------------------------------------------------------------
struct FabricRouterSlots {
  uint32_t sender_slots = 0;    // per sender channel
  uint32_t receiver_slots = 0;
};

// First fit over REFERENCE §6.2's options for `l1_bytes` of ERISC L1 from `l1_base`:
// line {8 sender, 16 receiver}, then {8, 8}, {4, 8}; ring {8, 8}, then {4, 8}. Throws when
// even the smallest does not fit.
FabricRouterSlots choose_fabric_router_slots(uint32_t l1_base, uint32_t l1_bytes, uint32_t max_payload_bytes,
                                             bool ring);

// The routers of a ring with dateline VCs (REFERENCE 6.1's mid-2025 row, 6.2, 6.7). The two
// routers on the dateline link are Dateline routers; the other router on each of their chips is
// DatelineUpstream; every other ring router is Ordinary.
enum class DatelineRouterKind : uint8_t { Ordinary, Dateline, DatelineUpstream };
const char* to_string(DatelineRouterKind kind);

// First fit over REFERENCE 6.2's mid-2025 options: an ordinary ring router {8 sender, 8
// receiver}, then {4, 8}, for each of its 3 sender channels and 2 receivers; dateline and
// dateline-upstream routers {8, 16}, then {8, 8}, with the channels they never use at 0 slots
// (a dateline router: sender channel 2 (VC1) and the VC0 receiver, as no VC1 packet crosses the
// dateline and every VC0 packet that does becomes VC1; its upstream neighbour: sender channel 1
// and the VC1 receiver, which only a VC0 receiver on the dateline would feed / only a second
// crossing would reach). Throws when even the smallest option does not fit.
kernels::FabricRouterSlotCounts choose_dateline_router_slots(uint32_t l1_base, uint32_t l1_bytes,
                                                             uint32_t max_payload_bytes, DatelineRouterKind kind);

KernelArgs build_fabric_router_args(const kernels::FabricRouterConfig& config);

// The worker's connection block for sender channel 0 of the router at NoC0 (edm_x, edm_y),
// with the worker's three semaphore ids, as the interpreter's runtime args carry it.
api::FabricConnectionConfig worker_fabric_connection(const kernels::FabricRouterConfig& router, uint32_t edm_noc_x,
                                                     uint32_t edm_noc_y, uint32_t flow_control_semaphore_id,
                                                     uint32_t teardown_semaphore_id,
                                                     uint32_t buffer_index_semaphore_id);

// ---- Legacy EDM -----------------------------------------------------------------------------------
struct LegacyEdmChannelSpec {
  NocCoord worker;
  uint32_t worker_semaphore_id = 0;
  uint32_t edm_semaphore_id = 0;
  uint32_t num_messages = 0;
};

// Channels: the config's senders first, then its receivers.
KernelArgs build_legacy_edm_args(const kernels::LegacyEdmConfig& config, uint32_t termination_semaphore_id,
                                 const std::vector<LegacyEdmChannelSpec>& channels);

// The worker's block for channel `channel` of the EDM at NoC0 (edm_x, edm_y).
api::LegacyEdmChannelConfig legacy_edm_worker_channel(const kernels::LegacyEdmConfig& config, uint32_t channel,
                                                      uint32_t edm_noc_x, uint32_t edm_noc_y,
                                                      uint32_t edm_semaphore_id, uint32_t worker_semaphore_id);

// ---- Legacy all-gather workers (legacy_all_gather/legacy_all_gather_args.hpp) ---------------------
struct LegacyAllGatherWorkerSpec {
  bool is_sender = false;
  uint32_t scratch_cb_id = 0;
  uint32_t page_size_bytes = 0;
  uint32_t page_stride_bytes = 0;
  uint32_t pages_per_message = 1;
  uint32_t relay_semaphore_id = 0;
  api::LegacyEdmChannelConfig edm_channel{};  // worker semaphore as an id
  std::optional<uint32_t> edm_termination_semaphore_id;  // WORKER_INITIATED EDMs only
  TensorArgs output;
  std::optional<TensorArgs> input;  // senders only
  // Sender: [input, own output slice, relayed slices...]; receiver: arriving slices in order.
  std::vector<api::CclCommandTensor> slices;
  bool local_copy = false;
};

KernelArgs build_legacy_all_gather_worker_args(const LegacyAllGatherWorkerSpec& spec);

// ---- Legacy reduce-scatter workers (legacy_reduce_scatter/legacy_reduce_scatter_args.hpp) ---------
struct LegacyReduceScatterStep {
  uint32_t kind = 0;  // kernels::legacy_reduce_scatter::StepKind
  api::CclCommandTensor run{};
};
struct LegacyReduceScatterWorkerSpec {
  bool is_sender = false;
  uint32_t partial_cb_id = 0;
  uint32_t local_cb_id = 0;
  uint32_t reduced_cb_id = 0;
  uint32_t scratch_cb_id = 0;
  uint32_t page_size_bytes = 0;
  uint32_t page_stride_bytes = 0;
  uint32_t pages_per_message = 1;
  std::optional<api::LegacyEdmChannelConfig> edm_channel;  // worker semaphore as an id
  std::optional<uint32_t> edm_termination_semaphore_id;   // WORKER_INITIATED EDMs only
  TensorArgs output;
  TensorArgs input;
  std::vector<LegacyReduceScatterStep> steps;
  // Receiver: its ready semaphore id; sender: the one it +1s, on the core at NoC0 ready_core.
  std::optional<uint32_t> ready_semaphore_id;
  NocCoord ready_core{};
};

KernelArgs build_legacy_reduce_scatter_worker_args(const LegacyReduceScatterWorkerSpec& spec);

// ---- Reduce ------------------------------------------------------------------------------------------
struct ReduceSpec {
  uint32_t in0_cb_id = 0;
  uint32_t in1_cb_id = 1;
  uint32_t out_cb_id = 2;
  uint32_t data_format = kernels::reduce::kDataFormatFloat16B;
  uint32_t num_blocks = 0;
  uint32_t pages_per_block = 1;
  // The last in2_blocks of num_blocks also add in2: (in0 + in1) + in2. 0: no third input.
  uint32_t in2_cb_id = 0;
  uint32_t in2_blocks = 0;
  // Passes over the num_blocks blocks, the running sums kept in the out CB (kRtPasses); 1: none.
  uint32_t passes = 1;
};

KernelArgs build_reduce_args(const ReduceSpec& spec);

// ---- Concat (concat/concat_args.hpp) -------------------------------------------------------------
struct ConcatSpec {
  uint32_t in_cb_id = 0;      // kernels::concat::kInputBatchTiles pages of a tile
  uint32_t out_cb_id = 1;     // one tile
  uint32_t unpack_cb_id = 2;  // bfp8_b only: one page of kernels::concat::kUnpackedTileBytes
  uint32_t element_bytes = 2;  // 2 (bf16), 4 (fp32), 1 (bfp8_b)
  uint32_t dim = 3;
  uint32_t shape[4] = {1, 1, 32, 32};  // one rank's logical shape, elements
  uint32_t first_tile = 0;
  uint32_t num_tiles = 0;
  uint32_t tile_bytes = 0;
  TensorArgs output;                   // its address is the output's
  TensorArgs input;                    // the inputs' common layout; its address is ignored
  std::vector<uint32_t> in_addresses;  // rank order
};

// Throws KernelArgsError naming the arg concat::parse_concat_args refuses.
KernelArgs build_concat_args(const ConcatSpec& spec);

// ---- Faults ------------------------------------------------------------------------------------------
// One line for a kernel_fault(code, command_index, word_offset) of kernel `kernel` run with
// `runtime_args`: the code's name and description, and, for the interpreter, the stream, the
// command index and the disassembled command.
std::string describe_kernel_fault(std::string_view kernel, std::span<const uint32_t> runtime_args, uint32_t code,
                                  uint32_t command_index, uint32_t word_offset);

// "stream s #i <disassembly>" for command `command_index` of interpreter stream `stream`
// (what debug_set_current_command reported), for hang reports. Never throws on bad args.
std::string describe_interpreter_command(std::span<const uint32_t> runtime_args, uint32_t stream,
                                         uint32_t command_index);

}  // namespace cclmesh::kargs
