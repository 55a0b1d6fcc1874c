#include "tools/cclmesh/op_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "runtime/ccl/all_broadcast/all_broadcast.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "runtime/ccl/all_to_all/all_to_all.hpp"
#include "runtime/ccl/broadcast/broadcast.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/ccl/common/legacy_links.hpp"
#include "runtime/ccl/reduce/reduce.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/send_recv/send_recv.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "runtime/remote/remote_mesh_device.hpp"
#include "sim/device/fabric_reembed.hpp"
#include "sim/device/planning_mesh_device.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "sim/engine/check.hpp"
#include "tools/cclmesh/all_reduce_halves.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/noc_usage_dump.hpp"
#include "tools/cclmesh/exit_without_teardown.hpp"
#include "tools/cclmesh/fault_spec.hpp"
#include "tools/cclmesh/op_buffers.hpp"
#include "tools/cclmesh/output_check.hpp"
#include "tools/cclmesh/result_table.hpp"
#include "tools/cclmesh/workload_cache.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/faults.hpp"
#include "topologies/link_whatif.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {

namespace {

using runtime::BufferHandle;
using runtime::ChipId;
using Bytes = std::vector<std::byte>;
// Expected outputs are shared between chips that expect the same bytes (all_gather, broadcast),
// so the host keeps one copy of a reference, not one per chip.
using SharedBytes = std::shared_ptr<const Bytes>;

// --json's `algorithm` of an all_gather that falls back to all_broadcast + concat (no option
// chooses it, so no option's name; the other gathers record none).
constexpr const char* kAllGatherBroadcastFallback = "broadcast-concat";

// One message for --size below a page per chip, whether refused before the device is built
// (reject_size_below_a_page_per_chip) or while the op is prepared (prepare_collective).
[[noreturn]] void throw_size_below_a_page_per_chip(std::uint64_t size_bytes, std::uint64_t page_bytes,
                                                   std::uint64_t chips) {
  throw UsageError(fmt::format("--size: {} B is less than one {} B page per chip on {} chips; expected at least {} B",
                               size_bytes, page_bytes, chips, page_bytes * chips));
}

topo::Topology load_topology(const std::string& spec) {
  try {
    return topo::load_system(spec);
  } catch (const topo::InputError& e) {
    throw UsageError(fmt::format("--system: {}", e.what()));
  }
}

// Seeded input bytes: std::mt19937_64's output is fixed by the standard, so every machine
// generates the same tensors for the same seed.
Bytes seeded_bytes(std::uint64_t seed, std::uint64_t salt, std::uint64_t bytes) {
  std::mt19937_64 generator(seed * 0x9E3779B97F4A7C15ull + salt);
  Bytes data(bytes);
  for (std::uint64_t i = 0; i < bytes; i += 8) {
    const std::uint64_t word = generator();
    for (std::uint64_t b = 0; b < 8 && i + b < bytes; ++b) data[i + b] = static_cast<std::byte>(word >> (8 * b));
  }
  return data;
}

using Check = OutputCheck;

bool legacy_mode(const RunOptions& options) { return options.mode == "legacy"; }

sim::device::SimMeshDeviceOptions device_options(const RunOptions& options, bool ring,
                                                 sim::trace::TraceRecorder* trace) {
  sim::device::SimMeshDeviceOptions device;
  device.trace = trace;
  device.data_mode = options.no_data ? sim::DataMode::TimingOnly : sim::DataMode::Functional;
  // Legacy mode: no persistent routers; each op launches its own EDMs on the ethernet cores.
  device.fabric.mode = legacy_mode(options) ? runtime::FabricMode::None
                       : ring               ? runtime::FabricMode::Ring
                                            : runtime::FabricMode::Line;
  device.fabric.max_payload_bytes = options.fabric_payload_bytes;
  device.fabric.receiver_packets_in_flight = options.fabric_rx_in_flight;
  if (options.erisc_unreserved_bytes) device.fabric.erisc_unreserved_bytes = *options.erisc_unreserved_bytes;
  // Along an axis, the device runs tt-metal's FABRIC_1D / FABRIC_1D_RING: a line (or ring) per
  // mesh row and column, each group on its own (REFERENCE 3.4, 6.7).
  if (options.cluster_axis) device.fabric.scope = runtime::FabricScope::Axes;
  device.fabric.num_links = options.links;
  // --chips: the fabric is one line or ring through them alone (legacy mode has no fabric; its
  // group is the chips, GroupSelection::chips).
  if (!legacy_mode(options)) device.fabric.chip_order.assign(options.chips.begin(), options.chips.end());
  device.max_simulated_time = options.max_sim_time;
  device.max_wall_seconds = options.max_wall_seconds;
  device.faults = options.faults.plan;
  if (options.faults.no_bubble) device.fabric.bubble_flow_control = false;
  return device;
}

namespace ccl = runtime::ccl;

// Seeded bf16 / fp32 values whose high byte keeps them finite and small (2^-15 .. 2^1), so sums
// never overflow and every chip's reduction is comparable bit for bit.
Bytes seeded_finite(std::uint64_t seed, std::uint64_t salt, std::uint64_t bytes) {
  Bytes data = seeded_bytes(seed, salt, bytes);
  for (std::uint64_t i = 1; i < bytes; i += 2) {
    data[i] = static_cast<std::byte>(0x38 + (static_cast<unsigned>(data[i]) & 0x0F));
  }
  return data;
}

ccl::DataType parse_dtype(const std::string& text) {
  if (text == "fp32") return ccl::DataType::Float32;
  if (text == "bfp8") return ccl::DataType::Bfloat8B;
  return ccl::DataType::Bfloat16;
}

// One chip's tensor of `pages` pages: TILE pages along dim 3 ([1,1,32,32P]); ROW_MAJOR rows
// of 1024 elements along dim 2 ([1,1,P,1024]), since a ROW_MAJOR page is a whole row.
ccl::TensorSpec tensor_of_pages(const RunOptions& options, std::uint64_t pages) {
  ccl::TensorSpec spec;
  spec.dtype = parse_dtype(options.dtype);
  spec.layout = options.layout == "row_major" ? ccl::Layout::RowMajor : ccl::Layout::Tile;
  // A 4D shape holds 32-bit extents: refuse what would wrap rather than run a smaller tensor.
  const std::uint64_t extent = spec.layout == ccl::Layout::Tile ? 32 * pages : pages;
  if (extent > std::numeric_limits<std::uint32_t>::max()) {
    throw UsageError(fmt::format("--size: {} pages per chip do not fit a tensor shape; use a smaller size", pages));
  }
  const auto p = static_cast<std::uint32_t>(pages);
  spec.shape = spec.layout == ccl::Layout::Tile ? std::array<std::uint32_t, 4>{1, 1, 32, 32 * p}
                                                : std::array<std::uint32_t, 4>{1, 1, p, 1024};
  return spec;
}

std::uint32_t gather_dim(const RunOptions& options) { return options.layout == "row_major" ? 2 : 3; }

std::uint64_t page_bytes_of(const RunOptions& options) {
  try {
    return ccl::page_size_bytes(tensor_of_pages(options, 1));
  } catch (const ccl::CclParamsError& e) {
    throw UsageError(fmt::format("--dtype/--layout: {}", e.what()));
  }
}

// The tensor of --shape, in the run's dtype and layout.
ccl::TensorSpec tensor_of_shape(const RunOptions& options, const std::array<std::uint32_t, 4>& shape) {
  page_bytes_of(options);  // an invalid --dtype/--layout pair is refused naming them
  ccl::TensorSpec spec = tensor_of_pages(options, 1);
  spec.shape = shape;
  return spec;
}

// all_gather's --shape is the gathered output (REFERENCE 8's convention for its AG rows): each
// chip's input is it split N ways along dim, which must divide (tt-metal's shape[dim] % N == 0).
ccl::TensorSpec gathered_input(const RunOptions& options, std::uint32_t dim, std::uint32_t n) {
  const std::array<std::uint32_t, 4>& shape = *options.shape;
  if (shape[dim] % n != 0) {
    throw UsageError(fmt::format("--shape: {} has {} along dim {}, which does not split over {} chips; all_gather's "
                                 "--shape is the gathered output, expected a multiple of {} along --dim",
                                 fmt::join(shape, ","), shape[dim], dim, n, n));
  }
  std::array<std::uint32_t, 4> input = shape;
  input[dim] /= n;
  return tensor_of_shape(options, input);
}

// reduce_scatter and all_to_all cut each chip's tensor into N equal parts along --dim (tt-metal's
// shape[dim] % N == 0, REFERENCE 11.15). --size's tensor has whole pages along one dim only, so
// another --dim cannot split; a --shape must hold a multiple of N pages there. Refused here
// naming the option at fault; the library's refusal names only the op. A ROW_MAJOR dim 3 is
// left to all_to_all's own refusal, which says why it cannot move rows in pieces.
void require_split_along_dim(const RunOptions& options, const ccl::TensorSpec& tensor, std::uint32_t dim,
                             std::uint32_t n, const char* parts) {
  const bool tile = tensor.layout == ccl::Layout::Tile;
  if (!tile && dim == 3) return;
  const std::uint32_t pages = ccl::dim_of(ccl::shape_in_pages(tensor), dim);
  if (pages % n == 0) return;
  const char* unit = tile && dim >= 2 ? (pages == 1 ? "tile" : "tiles") : (pages == 1 ? "page" : "pages");
  const auto op = to_string(options.op);
  if (!options.shape) {
    throw UsageError(fmt::format("--dim: {} with --size: {} cuts each chip's tensor into {} equal {} along --dim, and "
                                 "--size's [{}] has {} {} along dim {}; expected --dim {} with --size, or --shape with "
                                 "a multiple of {} along --dim",
                                 dim, op, n, parts, fmt::join(tensor.shape, ","), pages, unit, dim,
                                 gather_dim(options), n));
  }
  const std::string multiple = tile && dim >= 2 ? fmt::format("{} tiles ({} elements)", n, 32 * n)
                                                : fmt::format("{}", n);
  throw UsageError(fmt::format("--shape: {} has {} {} along dim {}, which does not split into {} equal {}; {} cuts "
                               "each chip's tensor along --dim, expected a multiple of {} there",
                               fmt::join(*options.shape, ","), pages, unit, dim, n, parts,
                               op, multiple));
}

runtime::TensorMemoryLayout memory_layout_of(const ShardRequest& shard) {
  if (shard.layout == "height") return runtime::TensorMemoryLayout::HeightSharded;
  if (shard.layout == "width") return runtime::TensorMemoryLayout::WidthSharded;
  return runtime::TensorMemoryLayout::BlockSharded;
}

std::uint32_t ceil_div(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t q = (a + b - 1) / b;
  if (q > std::numeric_limits<std::uint32_t>::max()) {
    throw UsageError(fmt::format("--shard: a shard of {} pages does not fit a 32-bit shard spec; use a larger "
                                 "--shard-grid or a smaller tensor",
                                 q));
  }
  return static_cast<std::uint32_t>(q);
}

// Where the op's input and output buffers live: --memory, interleaved or sharded over
// --shard-grid (the input, and the output unless --out-shard* gives its own). A shard is
// (height, width) in pages: TILE pages are 32x32 tiles, a ROW_MAJOR page is a whole row, so a
// ROW_MAJOR tensor shards by rows only.
class BufferPlacement {
 public:
  BufferPlacement(const RunOptions& options, runtime::BufferType type) : options_(options), type_(type) {
    const std::optional<ShardRequest>& out = output_request();
    for (const auto& [request, option] : {std::pair{&options.shard, "--shard"}, std::pair{&out, "--out-shard"}}) {
      if (*request && options.layout == "row_major" && (*request)->layout != "height") {
        throw UsageError(fmt::format("{}: '{}' cuts rows, and a ROW_MAJOR page is a whole row; expected {} height "
                                     "with --layout row_major",
                                     option, (*request)->layout, option));
      }
    }
  }

  runtime::BufferType type() const { return type_; }

  // The output's shard request: --out-shard*'s, else the input's.
  const std::optional<ShardRequest>& output_request() const {
    return options_.output_memory ? options_.output_memory->shard : options_.shard;
  }

  // Interleaved, in --memory: intermediates and the tensors of an unsharded run.
  runtime::BufferConfig interleaved(const ccl::TensorSpec& t) const { return ccl::interleaved_buffer_config(t, type_); }

  // The config of the op's input (`request` = --shard's) or output (output_request()), `what`
  // ("input" or "output") naming it. `explicit_shard`: the shard asked for this tensor, in
  // elements; unset: derived from the tensor and the grid. `option`: "--shard" or "--out-shard",
  // whose -shape / -grid a refusal names.
  runtime::BufferConfig of(const ccl::TensorSpec& t, const char* what, const std::optional<ShardRequest>& request,
                           const std::optional<std::array<std::uint32_t, 2>>& explicit_shard, const char* option,
                           std::array<std::uint32_t, 2>* shard_elements = nullptr) const {
    if (!request) return interleaved(t);
    const ShardRequest& s = *request;
    const api::Shape4D pages = ccl::shape_in_pages(t);
    const bool tile = t.layout == ccl::Layout::Tile;
    std::array<std::uint32_t, 2> shard{};  // pages
    if (explicit_shard) {
      const auto [h, w] = *explicit_shard;
      if (tile && (h % 32 != 0 || w % 32 != 0)) {
        throw UsageError(fmt::format("{}-shape: {}x{} is not whole 32x32 tiles; a TILE shard's height and width "
                                     "are multiples of 32",
                                     option, h, w));
      }
      if (!tile && w != t.shape[3]) {
        throw UsageError(fmt::format("{}-shape: {}x{} cuts a ROW_MAJOR row of {} elements; a ROW_MAJOR shard "
                                     "holds whole rows (expected width {})",
                                     option, h, w, t.shape[3], t.shape[3]));
      }
      shard = tile ? std::array<std::uint32_t, 2>{h / 32, w / 32} : std::array<std::uint32_t, 2>{h, 1};
    } else {
      shard = derived_shard(s, pages, option);
    }
    if (shard_elements != nullptr) *shard_elements = in_elements(t, shard);
    runtime::ShardSpec spec;
    for (const CoreRangeRequest& r : s.grid) spec.grid.push_back(runtime::CoreRange{{r.x0, r.y0}, {r.x1, r.y1}});
    spec.shard_height_pages = shard[0];
    spec.shard_width_pages = shard[1];
    spec.tensor_width_pages = pages.x;
    spec.orientation =
        s.orientation == "row" ? runtime::ShardOrientation::RowMajor : runtime::ShardOrientation::ColMajor;
    const runtime::BufferConfig config{type_, ccl::size_bytes(t), ccl::page_size_bytes(t), memory_layout_of(s), spec};
    if (explicit_shard) require_shard_holds(config, t, what, s, *explicit_shard, option);
    return config;
  }

 private:
  // A shard (height, width) in pages, in elements: TILE pages are 32x32, a ROW_MAJOR page a row.
  static std::array<std::uint32_t, 2> in_elements(const ccl::TensorSpec& t, std::array<std::uint32_t, 2> shard) {
    return t.layout == ccl::Layout::Tile ? std::array<std::uint32_t, 2>{shard[0] * 32, shard[1] * 32}
                                         : std::array<std::uint32_t, 2>{shard[0], t.shape[3]};
  }

  // The shard tt-metal derives for the layout from the tensor (in pages) and the grid: the
  // smallest that holds the tensor there.
  static std::array<std::uint32_t, 2> derived_shard(const ShardRequest& s, const api::Shape4D& pages,
                                                    const char* option) {
    const std::uint64_t height_pages = std::uint64_t{pages.w} * pages.z * pages.y;
    const std::uint64_t cores = s.cores();
    const bool row = s.orientation == "row";
    if (s.layout == "height") return {ceil_div(height_pages, cores), pages.x};
    if (s.layout == "width") return {ceil_div(height_pages, 1), ceil_div(pages.x, cores)};
    // Block: the tensor's rows split over the grid's rows and its width over the columns
    // (column-major orientation: the other way round), tt-metal's block sharding, which needs
    // the grid to be one rectangle.
    if (s.grid.size() != 1) {
      throw UsageError(fmt::format("{}-grid: '{}' is {} core ranges; block sharding splits the tensor over one "
                                   "rectangle's rows and columns, expected one range",
                                   option, s.grid_text(), s.grid.size()));
    }
    const std::uint32_t columns = s.grid.front().x1 - s.grid.front().x0 + 1;
    const std::uint32_t rows = s.grid.front().y1 - s.grid.front().y0 + 1;
    return {ceil_div(height_pages, row ? rows : columns), ceil_div(pages.x, row ? columns : rows)};
  }

  // An explicit shard must hold the tensor on its grid. The layout is checked on a worker grid
  // past any chip's (the device checks its own cores and banks, naming them), so what fails
  // here is the shard's shape, refused in the elements it was given in.
  static void require_shard_holds(runtime::BufferConfig config, const ccl::TensorSpec& t, const char* what,
                                  const ShardRequest& s, std::array<std::uint32_t, 2> asked, const char* option) {
    config.type = runtime::BufferType::L1;
    try {
      const runtime::BufferLayout layout(config, 0, runtime::CoreCoord{64, 64}, 64);
      return;
    } catch (const runtime::BufferConfigError&) {
    }
    const std::uint32_t width = in_elements(t, {1, ccl::shape_in_pages(t).x})[1];
    std::string expected;
    if (s.layout == "block" && s.grid.size() != 1) {
      expected = "shards that cover it";
    } else {
      const std::array<std::uint32_t, 2> least = in_elements(t, derived_shard(s, ccl::shape_in_pages(t), option));
      expected = s.layout == "height" ? fmt::format("width {} (whole rows) and height at least {}", width, least[0])
                                      : fmt::format("at least {}x{}", least[0], least[1]);
    }
    throw UsageError(fmt::format("{}-shape: {}x{}{} on {} ({} cores) does not hold the {} [{}] {}-sharded; expected {}",
                                 option, asked[0], asked[1],
                                 std::string_view(option) == "--shard" && std::string_view(what) == "output"
                                     ? " (the output's, from --shard-shape)"
                                     : "",
                                 s.grid_text(), s.cores(), what, fmt::join(t.shape, ","), s.layout, expected));
  }

  const RunOptions& options_;
  runtime::BufferType type_;
};

// The output's explicit shard: --out-shard-shape's when --out-shard* is given (unset: derived from
// the output and its grid); else --shard-shape, the per-chip input's, following the op's tensor
// along dim: N times larger (all_gather), N times smaller (reduce_scatter), else the same. Dims
// 0..2 are the shard's rows, dim 3 its width (tt-metal's run_all_gather_sharded: output shard =
// input shard x N along dim 3).
enum class OutputAlongDim : std::uint8_t { Same, Gathered, Scattered };

std::optional<std::array<std::uint32_t, 2>> output_shard_of(const RunOptions& options, std::uint32_t dim,
                                                            std::uint32_t n, OutputAlongDim along_dim) {
  if (options.output_memory) {
    const std::optional<ShardRequest>& out = options.output_memory->shard;
    return out ? out->shape : std::nullopt;
  }
  if (!options.shard || !options.shard->shape) return std::nullopt;
  std::array<std::uint32_t, 2> shard = *options.shard->shape;
  std::uint32_t& along = shard[dim == 3 ? 1 : 0];
  if (along_dim == OutputAlongDim::Gathered) {
    along *= n;
  } else if (along_dim == OutputAlongDim::Scattered) {
    if (along % n != 0) {
      throw UsageError(fmt::format("--shard-shape: {}x{} does not split over {} chips along dim {}; reduce_scatter's "
                                   "output shard is the input's divided by N there",
                                   shard[0], shard[1], n, dim));
    }
    along /= n;
  }
  return shard;
}

// What a prepared op leaves for the run: its workloads, the chips it runs on, how to check the
// result, and the figures the metrics need.
struct PreparedOp {
  WorkloadCache::Workloads workloads;
  std::uint32_t group_size = 0;
  // The op's groups as run, in rank order (send_recv: each group's sender and receiver).
  std::vector<std::vector<ChipId>> groups;
  std::uint64_t size_bytes = 0;   // nccl-tests S as run
  std::uint64_t count = 0;        // elements
  std::function<Check()> verify;  // empty with --no-data
  std::array<std::uint32_t, 4> shape{};  // the tensor size_bytes measures
  std::optional<std::uint32_t> dim;
  std::array<std::uint32_t, 2> input_shard{};  // elements, sharded runs only
  std::array<std::uint32_t, 2> output_shard{};
  std::string algorithm;  // what the op's builder chose, as its option names it, and why (RunResult's)
  std::string algorithm_reason;
  bool algorithm_fallback = false;
  std::optional<AllReduceHalves> algorithm_halves;
};

// An output buffer of an op and its name in mismatch reports and checksums. Most ops have one
// ("output"); all_broadcast has one per rank ("output 0" .. "output N-1").
struct OutputBuffer {
  std::string name;
  BufferHandle handle;
};

// What each chip's output buffers must hold, one entry per OutputBuffer of the op, in order. A
// chip that is not in the map has no defined output (reduce's non-root chips) and is not read.
using ExpectedOutputs = std::map<ChipId, std::vector<SharedBytes>>;

void reject_unsupported(const RunOptions& options, std::uint32_t n_chips) {
  const bool legacy_op = options.op == CollectiveOp::AllGather || options.op == CollectiveOp::ReduceScatter ||
                         options.op == CollectiveOp::AllReduce;
  if (legacy_mode(options) && !legacy_op) {
    throw UsageError(fmt::format("--mode: 'legacy' runs the 2024 per-op EDMs, which carried only all_gather, "
                                 "reduce_scatter and all_reduce; {} is a fabric-era op (REFERENCE 5, 7.6); use "
                                 "--mode fabric",
                                 to_string(options.op)));
  }
  const bool has_workers_per_link = options.op == CollectiveOp::ReduceScatter || options.op == CollectiveOp::AllReduce;
  const bool relays = options.op == CollectiveOp::AllGather && options.topology == "ring" && !legacy_mode(options) &&
                      options.ag_ring_algorithm != "multicast";
  if (options.workers_per_link && (!(has_workers_per_link || relays) || legacy_mode(options))) {
    throw UsageError(fmt::format("--workers-per-link: {} asked for {} ({}, {} mode); it applies to reduce_scatter, "
                                 "all_reduce and all_gather relaying on a ring, in fabric mode",
                                 *options.workers_per_link, to_string(options.op), options.topology, options.mode));
  }
  if (options.ag_ring_algorithm != "auto") {
    const bool gathers = options.op == CollectiveOp::AllGather || options.op == CollectiveOp::AllReduce;
    if (!gathers) {
      throw UsageError(fmt::format("--ag-ring-algorithm: '{}' asked for {}; it applies to all_gather and all_reduce",
                                   options.ag_ring_algorithm, to_string(options.op)));
    }
    if (options.ag_ring_algorithm == "relay" && (options.topology != "ring" || legacy_mode(options))) {
      throw UsageError(fmt::format("--ag-ring-algorithm: 'relay' relays through workers on a fabric ring; this is a "
                                   "{} in {} mode (expected --topology ring --mode fabric; a line multicasts, "
                                   "legacy mode relays through its EDMs)",
                                   options.topology, options.mode));
    }
  }
  if (options.chunks_per_sync) {
    if (!relays) {
      throw UsageError(fmt::format("--chunks-per-sync: {} given for {} ({}, {} mode, --ag-ring-algorithm {}); it "
                                   "applies to all_gather relaying on a fabric ring",
                                   *options.chunks_per_sync, to_string(options.op), options.topology, options.mode,
                                   options.ag_ring_algorithm));
    }
  }
  if (n_chips < 2) {
    throw UsageError(fmt::format("--system: {} needs at least 2 chips, the system has {}", to_string(options.op), n_chips));
  }
  if (options.topology == "ring" && n_chips == 2 && !options.cluster_axis) {
    throw UsageError("--topology: a ring of 2 chips does not work (tt-metal issue #12770); use --topology line");
  }
  const bool has_dim = options.op == CollectiveOp::AllGather || options.op == CollectiveOp::ReduceScatter ||
                       options.op == CollectiveOp::AllToAll;
  if (options.dim && !has_dim) {
    throw UsageError(fmt::format("--dim: {} given for {}, which has no dim; --dim applies to all_gather, "
                                 "reduce_scatter and all_to_all",
                                 *options.dim, to_string(options.op)));
  }
  require_data_for_corruption(options.faults.plan, options.no_data, "a --no-data run", "run");
  if (options.root != 0 && options.op != CollectiveOp::Reduce) {
    throw UsageError(fmt::format("--root: {} given for {}; --root applies to --op reduce", options.root,
                                 to_string(options.op)));
  }
  if (options.rounds && options.op != CollectiveOp::AllToAll) {
    throw UsageError(fmt::format("--rounds: {} given for {}; --rounds applies to --op all_to_all", *options.rounds,
                                 to_string(options.op)));
  }
  if (options.rs_line_algorithm != "two_sided" &&
      (!has_workers_per_link || legacy_mode(options) || options.topology != "line")) {
    throw UsageError(fmt::format("--rs-line-algorithm: '{}' given for {} on a {} in {} mode; it applies to "
                                 "reduce_scatter and all_reduce on a line in fabric mode",
                                 options.rs_line_algorithm, to_string(options.op), options.topology, options.mode));
  }
  const bool reduces_scatter = options.op == CollectiveOp::ReduceScatter || options.op == CollectiveOp::AllReduce;
  if (options.rs_ring_algorithm != "auto" && (!reduces_scatter || legacy_mode(options) || options.topology != "ring")) {
    throw UsageError(fmt::format("--rs-ring-algorithm: '{}' given for {} on a {} in {} mode; it applies to "
                                 "reduce_scatter and all_reduce on a ring in fabric mode",
                                 options.rs_ring_algorithm, to_string(options.op), options.topology, options.mode));
  }
  if (options.rs_ring_algorithm != "auto" && options.op == CollectiveOp::AllReduce &&
      options.all_reduce_algo != "auto" && options.all_reduce_algo != "rs-ag") {
    throw UsageError(fmt::format("--rs-ring-algorithm: '{}' given with --all-reduce-algo {}; it chooses the reduce_scatter "
                                 "half of rs-ag (expected --all-reduce-algo rs-ag or auto)",
                                 options.rs_ring_algorithm, options.all_reduce_algo));
  }
  if (options.rs_ring_algorithm == "one-shot" && options.workers_per_link && *options.workers_per_link > 1) {
    throw UsageError(fmt::format("--workers-per-link: {} given with --rs-ring-algorithm one-shot; the one-shot runs "
                                 "one sender per link and direction (expected 1, or --rs-ring-algorithm chain)",
                                 *options.workers_per_link));
  }
  if (options.bcast_ring_algorithm != "auto" && (options.op != CollectiveOp::Broadcast || options.topology != "ring")) {
    throw UsageError(fmt::format("--bcast-ring-algorithm: '{}' given for {} on a {}; it applies to broadcast on a "
                                 "ring",
                                 options.bcast_ring_algorithm, to_string(options.op), options.topology));
  }
  if (options.all_reduce_algo != "auto" && options.op != CollectiveOp::AllReduce) {
    throw UsageError(fmt::format("--all-reduce-algo: '{}' given for {}; it applies to --op all_reduce",
                                 options.all_reduce_algo, to_string(options.op)));
  }
  // Legacy all_reduce: rs-ag or the composite (legacy all_gather + local sum); Auto picks by the pages.
  if (options.all_reduce_algo == "one-shot" && legacy_mode(options)) {
    throw UsageError("--all-reduce-algo: 'one-shot' in legacy mode; the one-shot multicasts through the persistent "
                     "fabric's routers, and the legacy EDMs carry neighbour to neighbour only (expected auto, rs-ag "
                     "or composite)");
  }
}

ccl::reduce_scatter::LineAlgorithm rs_line_algorithm(const std::string& text) {
  return text == "wrap" ? ccl::reduce_scatter::LineAlgorithm::Wrap : ccl::reduce_scatter::LineAlgorithm::TwoSided;
}

ccl::reduce_scatter::RingAlgorithm rs_ring_algorithm(const std::string& text) {
  if (text == "one-shot") return ccl::reduce_scatter::RingAlgorithm::OneShot;
  if (text == "chain") return ccl::reduce_scatter::RingAlgorithm::Chain;
  return ccl::reduce_scatter::RingAlgorithm::Auto;
}

ccl::broadcast::RingAlgorithm bcast_ring_algorithm(const std::string& text) {
  if (text == "both-ways") return ccl::broadcast::RingAlgorithm::BothWays;
  if (text == "split") return ccl::broadcast::RingAlgorithm::Split;
  return ccl::broadcast::RingAlgorithm::Auto;
}

// --rs-ring-algorithm's name of an algorithm.
std::string rs_ring_algorithm_name(ccl::reduce_scatter::RingAlgorithm algorithm) {
  switch (algorithm) {
    case ccl::reduce_scatter::RingAlgorithm::OneShot:
      return "one-shot";
    case ccl::reduce_scatter::RingAlgorithm::Chain:
      return "chain";
    case ccl::reduce_scatter::RingAlgorithm::Auto:
      break;
  }
  return "auto";
}

ccl::all_reduce::Algorithm all_reduce_algorithm(const std::string& text) {
  if (text == "one-shot") return ccl::all_reduce::Algorithm::OneShot;
  if (text == "rs-ag") return ccl::all_reduce::Algorithm::ReduceScatterAllGather;
  if (text == "composite") return ccl::all_reduce::Algorithm::Composite;
  return ccl::all_reduce::Algorithm::Auto;
}

// --all-reduce-algo's name of an algorithm.
std::string all_reduce_algorithm_name(ccl::all_reduce::Algorithm algorithm) {
  switch (algorithm) {
    case ccl::all_reduce::Algorithm::OneShot:
      return "one-shot";
    case ccl::all_reduce::Algorithm::ReduceScatterAllGather:
      return "rs-ag";
    case ccl::all_reduce::Algorithm::Composite:
      return "composite";
    case ccl::all_reduce::Algorithm::Auto:
      break;
  }
  return "auto";
}

ccl::all_gather::RingAlgorithm ag_ring_algorithm(const std::string& text) {
  if (text == "relay") return ccl::all_gather::RingAlgorithm::Relay;
  if (text == "multicast") return ccl::all_gather::RingAlgorithm::Multicast;
  return ccl::all_gather::RingAlgorithm::Auto;
}

// Reads every output buffer of every chip in `expected` and compares it with the host reference.
Check compare_all(runtime::MeshDevice& device, const std::vector<OutputBuffer>& outputs,
                  const ExpectedOutputs& expected, std::uint32_t page_bytes, std::uint32_t element_bytes) {
  Check check;
  Bytes actual;
  for (const auto& [chip, per_buffer] : expected) {
    CCLMESH_CHECK(per_buffer.size() == outputs.size(), "output check: one expected tensor per output buffer");
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      actual.resize(per_buffer[i]->size());
      device.read_buffer(chip, outputs[i].handle, actual);
      check.add_chip(chip, outputs[i].name, *per_buffer[i], actual, page_bytes, element_bytes);
    }
  }
  return check;
}

std::function<Check()> check_outputs(runtime::MeshDevice& device, std::vector<OutputBuffer> outputs,
                                     ExpectedOutputs expected, std::uint64_t page_bytes, std::uint32_t element) {
  return [&device, outputs = std::move(outputs), expected = std::move(expected), page_bytes, element] {
    return compare_all(device, outputs, expected, static_cast<std::uint32_t>(page_bytes), element);
  };
}

std::vector<OutputBuffer> single_output(const BufferHandle& buffer) { return {OutputBuffer{"output", buffer}}; }

// Legacy mode has no routing planes for the fabric plan to check --links against: a group may use
// what every hop has left after fast dispatch's tunnels (runtime/ccl/common/legacy_links.hpp).
void require_legacy_links(const RunOptions& options, const topo::Topology& topology,
                          const std::vector<std::vector<ChipId>>& groups, ccl::CclTopology shape) {
  for (const auto& group : groups) {
    const std::uint32_t usable = ccl::legacy_usable_links(topology, group, shape);
    if (options.links <= usable) continue;
    const auto [a, b] = ccl::legacy_narrowest_hop(topology, group, shape);
    throw UsageError(fmt::format("--links: {} link(s) asked in legacy mode; {}'s {} {} allows 1 to {} (hop {}-{} has "
                                 "{} physical link(s){}; REFERENCE 6.9)",
                                 options.links, options.system, options.topology, fmt::join(group, ","), usable, a, b,
                                 topology.links_between(static_cast<topo::ChipId>(a), static_cast<topo::ChipId>(b)),
                                 ccl::dispatch_tunnel_hops(topology).contains({std::min(a, b), std::max(a, b)})
                                     ? ", one of them carrying fast dispatch's tunnel"
                                     : ""));
  }
}

// The run's groups as the op's params take them: every row or column (--cluster-axis), the
// fabric's chips (fabric mode: --chips made the fabric), or in legacy mode --chips as one group.
ccl::GroupSelection group_selection(const RunOptions& options) {
  ccl::GroupSelection selection;
  selection.cluster_axis = options.cluster_axis;
  if (legacy_mode(options) && !options.chips.empty()) {
    selection.chips = {std::vector<ChipId>(options.chips.begin(), options.chips.end())};
  } else if (legacy_mode(options) && !options.legacy_group.empty()) {
    selection.chips = {std::vector<ChipId>(options.legacy_group.begin(), options.legacy_group.end())};
  }
  return selection;
}

// --chips: every chip once, on the system, at least 2, not with --cluster-axis (whose groups
// are the mesh's rows or columns), and consecutive chips neighbours (a ring's last and first
// too; options.topology is resolved). Whether the hops have the links asked is the fabric
// plan's (or, in legacy mode, require_legacy_links') check.
void check_chips(const RunOptions& options, const topo::Topology& topology) {
  if (options.chips.empty()) return;
  const std::string given = fmt::format("{}", fmt::join(options.chips, ","));
  if (options.cluster_axis) {
    throw UsageError(fmt::format("--chips: '{}' given with --cluster-axis {}, whose groups are the mesh's rows or "
                                 "columns; give one of them",
                                 given, *options.cluster_axis));
  }
  if (options.chips.size() < 2) {
    throw UsageError(fmt::format("--chips: '{}' is one chip; a collective needs at least 2, in line or ring order",
                                 given));
  }
  std::vector<std::uint32_t> seen;
  for (const std::uint32_t chip : options.chips) {
    if (!topology.has_chip(static_cast<topo::ChipId>(chip))) {
      throw UsageError(fmt::format("--chips: chip {} is not on {}; expected chip ids of the system (cclmesh topo "
                                   "--system {} lists them)",
                                   chip, options.system, options.system));
    }
    if (std::find(seen.begin(), seen.end(), chip) != seen.end()) {
      throw UsageError(fmt::format("--chips: chip {} appears twice in '{}'; expected each chip once", chip, given));
    }
    seen.push_back(chip);
  }
  // Checked here for both modes: legacy mode has no fabric plan to say it, and its link count
  // check would blame --links for a hop with no link at all.
  const auto linked = [&](std::uint32_t a, std::uint32_t b) {
    return topology.links_between(static_cast<topo::ChipId>(a), static_cast<topo::ChipId>(b)) > 0;
  };
  const std::size_t hops = options.topology == "ring" ? options.chips.size() : options.chips.size() - 1;
  for (std::size_t i = 0; i < hops; ++i) {
    const std::uint32_t a = options.chips[i];
    const std::uint32_t b = options.chips[(i + 1) % options.chips.size()];
    if (linked(a, b)) continue;
    throw UsageError(fmt::format("--chips: '{}': chips {} and {} are not neighbours on {}; expected consecutive chips "
                                 "that share a link{} (cclmesh topo --system {} lists the links)",
                                 given, a, b, options.system,
                                 options.topology == "ring" ? ", the last and the first too (a ring)" : "",
                                 options.system));
  }
}

// The hop of `group` (a ring closing back to its first chip) that `fault` takes down, if any.
std::optional<std::pair<std::uint32_t, std::uint32_t>> hop_down(const sim::device::LinkDownFault& fault,
                                                                const std::vector<std::uint32_t>& group, bool ring) {
  const std::size_t hops = ring ? group.size() : group.size() - 1;
  for (std::size_t i = 0; i < hops; ++i) {
    const std::uint32_t a = group[i];
    const std::uint32_t b = group[(i + 1) % group.size()];
    if ((fault.a == a && fault.b == b) || (fault.a == b && fault.b == a)) return std::pair{a, b};
  }
  return std::nullopt;
}

// A group laid as given whose hop is down from the start: reported as the fault it is, as the
// device reports one under a per-axis line, instead of a hang at start-up. `what` names the
// group, `instead` what would run.
void reject_group_across_down_links(const RunOptions& options, const std::vector<std::uint32_t>& group, bool ring,
                                    const std::string& what, const std::string& instead) {
  for (const sim::device::LinkDownFault& fault : options.faults.plan.link_down) {
    if (fault.at != sim::SimTime::zero()) continue;
    if (const auto hop = hop_down(fault, group, ring)) {
      throw runtime::DeviceError(runtime::DeviceError::Kind::Fault,
                                 fmt::format("fault {} at 0 s: hop {}-{} of {} (a {}) is down, and {}", fault.spec,
                                             hop->first, hop->second, what, ring ? "ring" : "line", instead));
    }
  }
}

// --chips runs its order as given: the device re-embeds only the whole-system fabric around a
// link down from the start (SimMeshDevice::reembed_around_down_links), and a legacy group is
// never moved: neither a row or column of a legacy run along an axis, which runs over the
// mesh's own links (no fabric to run it as a line around the link; session 21 review: it hung,
// its report's headline saying no worker waited on the link).
void reject_fixed_groups_across_down_links(const RunOptions& options, const topo::Topology& topology) {
  const bool ring = options.topology == "ring";
  if (!options.chips.empty()) {
    reject_group_across_down_links(options, options.chips, ring, fmt::format("--chips {}", fmt::join(options.chips, ",")),
                                   "a --chips order runs as given: only the whole-system fabric is re-embedded "
                                   "around down links; give chips whose hops avoid it");
  }
  if (legacy_mode(options) && options.cluster_axis) {
    for (const auto& coordinates : topo::axis_groups(topology, *options.cluster_axis)) {
      const std::vector<std::uint32_t> group(coordinates.begin(), coordinates.end());
      reject_group_across_down_links(
          options, group, ring, fmt::format("axis {} group {}", *options.cluster_axis, fmt::join(group, "-")),
          "legacy mode runs each row or column over its own links, not around a down link: run in fabric mode "
          "(a torus ring then runs as a line around it), or with --topology line where the down link closes the "
          "ring");
    }
  }
}

// Legacy mode on the whole system launches its EDMs along the system's ring (or line) as the
// embedding search finds it; with a link down from the start on it, the op would hang (each EDM
// waits for its peer across the link). A legacy op has no fabric to open a ring around the link,
// but it may run on another ring (or line) through every chip over the links left, as the
// fabric is re-embedded (sim/device/fabric_reembed.hpp): options.legacy_group is that one, and
// the run's notes say so. Without one, the run is refused as the fault (exit 3), naming fabric
// mode, where a ring runs as a line around one down link.
void lay_legacy_group_around_down_links(RunOptions& options, const topo::Topology& topology) {
  if (!legacy_mode(options) || !options.chips.empty() || options.cluster_axis) return;
  const bool ring = options.topology == "ring";
  const topo::Embedding own = ring ? topo::find_system_ring(topology) : topo::find_system_line(topology);
  const std::vector<std::uint32_t> group(own.chips.begin(), own.chips.end());
  topo::Topology usable = topology;
  std::vector<std::string> crossed;
  for (const sim::device::LinkDownFault& fault : options.faults.plan.link_down) {
    if (fault.at != sim::SimTime::zero()) continue;
    usable = topo::without_edge(usable, static_cast<topo::ChipId>(fault.a), static_cast<topo::ChipId>(fault.b));
    if (hop_down(fault, group, ring)) crossed.push_back(fault.spec);
  }
  if (crossed.empty()) return;
  try {
    const topo::Embedding around = ring ? topo::find_system_ring(usable) : topo::find_system_line(usable);
    options.legacy_group.assign(around.chips.begin(), around.chips.end());
  } catch (const topo::EmbeddingError& e) {
    throw runtime::DeviceError(
        runtime::DeviceError::Kind::Fault,
        fmt::format("fault {} at 0 s: legacy mode's {} {} crosses the down link(s) and no other {} through all {} "
                    "chips avoids them: {}; legacy mode runs its EDMs over the links of its {}, with no fabric to "
                    "run it around a down link: run in fabric mode (a ring then runs as a line around one)",
                    fmt::join(crossed, ", "), ring ? "ring" : "line", own.to_string(), ring ? "ring" : "line",
                    topology.chip_count(), e.what(), ring ? "ring" : "line"));
  }
}

// A run's fault effects, the note of a legacy group laid around a down link first.
std::vector<std::string> with_legacy_group_note(const RunOptions& options, std::vector<std::string> effects) {
  if (options.legacy_group.empty()) return effects;
  const bool ring = options.topology == "ring";
  effects.insert(effects.begin(),
                 fmt::format("legacy mode ran its {} as {}{}: the system's own crosses a link down from the start",
                             ring ? "ring" : "line", fmt::join(options.legacy_group, "-"),
                             ring ? fmt::format("-{}", options.legacy_group.front()) : ""));
  return effects;
}

// The groups of a run: from the device's fabric, or in legacy mode (no fabric) from the
// system's ring or line.
std::vector<std::vector<ChipId>> run_groups(const RunOptions& options, runtime::MeshDevice& device,
                                            const ccl::GroupSelection& selection) {
  try {
    if (legacy_mode(options)) {
      return ccl::resolve_legacy_groups(selection, device.topology(),
                                        options.topology == "ring" ? ccl::CclTopology::Ring : ccl::CclTopology::Line);
    }
    return ccl::resolve_groups(selection, device.topology(),
                               runtime::FabricPlan(device.topology(), device.fabric()));
  } catch (const ccl::CclParamsError& e) {
    if (!selection.cluster_axis) throw;
    throw UsageError(fmt::format("--cluster-axis: {} on {}: {}", *selection.cluster_axis, options.system, e.what()));
  }
}

// send_recv and broadcast move one buffer from a source chip: per group (the whole fabric, or
// with --cluster-axis every row or column at once) its rank 0 sends, to rank 1 (send_recv: one
// hop, as nccl-tests' sendrecv) or to every other rank (broadcast). Each source sends its own
// seeded bytes, so a chip that received another group's data does not verify.
PreparedOp prepare_pair_op(const RunOptions& options, runtime::MeshDevice& device, OpBuffers& buffers,
                           WorkloadCache& cache) {
  // The tensor: --shape's, or --size's pages (S = the bytes each receiver gets). Either may be
  // sharded (--shard, --out-shard*) in --memory; the op copies pages, whatever their layout.
  const std::uint64_t page_bytes = options.shape ? ccl::page_size_bytes(tensor_of_shape(options, *options.shape))
                                                 : page_bytes_of(options);
  ccl::TensorSpec tensor;
  if (options.shape) {
    tensor = tensor_of_shape(options, *options.shape);
  } else {
    const std::uint64_t pages = options.size_bytes / page_bytes;
    if (pages == 0) throw UsageError(fmt::format("--size: {} B is less than one {} B page", options.size_bytes, page_bytes));
    tensor = tensor_of_pages(options, pages);
  }
  const BufferPlacement placement(options, options.memory == "l1" ? runtime::BufferType::L1 : runtime::BufferType::Dram);
  PreparedOp op;
  const BufferHandle input = buffers.create(
      placement.of(tensor, "input", options.shard, options.shard ? options.shard->shape : std::nullopt, "--shard", &op.input_shard));
  // The output holds the same tensor: its explicit shard is --out-shard-shape's, else --shard-shape's.
  const BufferHandle output = buffers.create(placement.of(
      tensor, "output", placement.output_request(), output_shard_of(options, 3, 1, OutputAlongDim::Same),
      options.output_memory ? "--out-shard" : "--shard", &op.output_shard));
  const std::uint64_t bytes = input.config.size_bytes;
  const std::uint32_t element = ccl::element_bytes(tensor.dtype);
  op.shape = tensor.shape;
  op.count = options.shape ? std::uint64_t{tensor.shape[0]} * tensor.shape[1] * tensor.shape[2] * tensor.shape[3]
                           : bytes / page_bytes * (tensor.dtype == ccl::DataType::Bfloat8B ? 1024 : page_bytes / element);
  const ccl::GroupSelection selection = group_selection(options);
  const std::vector<std::vector<ChipId>> groups = run_groups(options, device, selection);
  op.size_bytes = bytes;
  const std::vector<ChipId>& first = groups.front();
  if (options.op == CollectiveOp::SendRecv) {
    ccl::send_recv::Params params;
    params.sender = first.at(0);
    params.receiver = first.at(1);
    params.input = input;
    params.output = output;
    params.groups = selection;
    params.fabric = device.fabric();
    params.num_links = options.links;
    op.workloads = cache.get(params, device.topology(), [&] { return ccl::send_recv::build(params, device.topology()); });
    op.group_size = 2;
    for (const std::vector<ChipId>& group : groups) op.groups.push_back({group.at(0), group.at(1)});
  } else {
    ccl::broadcast::Params params;
    params.root = first.at(0);
    params.input = input;
    params.output = output;
    params.groups = selection;
    params.fabric = device.fabric();
    params.num_links = options.links;
    params.ring_algorithm = bcast_ring_algorithm(options.bcast_ring_algorithm);
    if (params.ring_algorithm == ccl::broadcast::RingAlgorithm::Split) {
      // Where the groups are not whole rings (or too long a ring for a multicast), named by the
      // option; what refuses the broadcast whatever its algorithm is reported as it is.
      ccl::broadcast::Params any_algorithm = params;
      any_algorithm.ring_algorithm = ccl::broadcast::RingAlgorithm::Auto;
      ccl::broadcast::resolved_ring_algorithm(any_algorithm, device.topology());
      try {
        ccl::broadcast::resolved_ring_algorithm(params, device.topology());
      } catch (const ccl::CclParamsError& e) {
        throw UsageError(fmt::format("--bcast-ring-algorithm: 'split': {}", e.what()));
      }
    }
    op.workloads = cache.get(params, device.topology(), [&] { return ccl::broadcast::build(params, device.topology()); });
    const ccl::broadcast::RingAlgorithmChoice choice = ccl::broadcast::ring_algorithm_choice(params, device.topology());
    op.algorithm = choice.algorithm == ccl::broadcast::RingAlgorithm::Split ? "split" : "both-ways";
    op.algorithm_reason = choice.reason;
    op.group_size = static_cast<std::uint32_t>(first.size());
    op.groups = groups;
  }
  if (!options.no_data) {
    ExpectedOutputs expected;
    for (const std::vector<ChipId>& group : groups) {
      const ChipId source = group.at(0);
      Bytes data = seeded_bytes(options.seed, source, bytes);
      device.write_buffer(source, input, data);
      const auto shared = std::make_shared<const Bytes>(std::move(data));
      const std::size_t receivers = options.op == CollectiveOp::SendRecv ? 2 : group.size();
      for (std::size_t rank = 1; rank < receivers; ++rank) expected[group.at(rank)] = {shared};
    }
    op.verify = check_outputs(device, single_output(output), std::move(expected), page_bytes, element);
  }
  return op;
}

// The chips of every group and each chip's seeded input; inputs in rank order per group.
struct GroupInputs {
  std::vector<std::vector<ChipId>> groups;
  std::map<ChipId, Bytes> inputs;
};

GroupInputs write_group_inputs(const RunOptions& options, runtime::MeshDevice& device, const ccl::GroupSelection& selection,
                               const BufferHandle& input, bool finite) {
  GroupInputs result;
  result.groups = run_groups(options, device, selection);
  if (options.no_data) return result;  // timing only: no host tensors, memory stays bounded
  const bool bfp8 = parse_dtype(options.dtype) == ccl::DataType::Bfloat8B;
  for (const auto& group : result.groups) {
    for (ChipId chip : group) {
      Bytes data = finite && !bfp8 ? seeded_finite(options.seed, chip, input.config.size_bytes)
                                   : seeded_bytes(options.seed, chip, input.config.size_bytes);
      if (finite && bfp8) ccl::reference::bound_bfp8_exponents(data);
      device.write_buffer(chip, input, data);
      result.inputs[chip] = std::move(data);
    }
  }
  return result;
}

// The check of a collective's outputs: the host reference of each group (inputs in rank order)
// against every output buffer of every chip. The reference gives, per rank, what each of the
// op's output buffers holds (an empty list: that rank's outputs are undefined and not read).
// Empty with --no-data (no inputs were made).
using RankOutputs = std::vector<std::vector<SharedBytes>>;  // [rank][output buffer]
using GroupReference =
    std::function<RankOutputs(const std::vector<ChipId>& group, const std::vector<Bytes>& inputs_by_rank)>;

SharedBytes share(Bytes bytes) { return std::make_shared<const Bytes>(std::move(bytes)); }

// One output buffer per rank, each rank its own tensor.
RankOutputs one_output_each(std::vector<Bytes> outputs) {
  RankOutputs shared;
  for (Bytes& b : outputs) shared.push_back({share(std::move(b))});
  return shared;
}

std::function<Check()> verifier(runtime::MeshDevice& device, std::vector<OutputBuffer> outputs,
                                const GroupInputs& in, std::uint64_t page_bytes, std::uint32_t element,
                                const GroupReference& reference) {
  if (in.inputs.empty()) return {};
  ExpectedOutputs expected;
  for (const auto& group : in.groups) {
    std::vector<Bytes> by_rank;
    for (ChipId chip : group) by_rank.push_back(in.inputs.at(chip));
    RankOutputs per_rank = reference(group, by_rank);
    CCLMESH_CHECK(per_rank.size() == group.size(), "output check: one reference entry per rank");
    for (std::size_t rank = 0; rank < group.size(); ++rank) {
      if (!per_rank[rank].empty()) expected[group[rank]] = std::move(per_rank[rank]);
    }
  }
  return check_outputs(device, std::move(outputs), std::move(expected), page_bytes, element);
}

PreparedOp prepare_collective(const RunOptions& options, runtime::MeshDevice& device, OpBuffers& buffers, bool ring,
                              WorkloadCache& cache) {
  // A --shape tensor's page: a tile, or one row of its own width (ROW_MAJOR).
  const std::uint64_t page_bytes =
      options.shape ? ccl::page_size_bytes(tensor_of_shape(options, *options.shape)) : page_bytes_of(options);
  const ccl::GroupSelection selection = group_selection(options);
  const std::vector<std::vector<ChipId>> groups = run_groups(options, device, selection);
  const auto n = static_cast<std::uint32_t>(groups.front().size());
  if (ring && n == 2) {  // the whole-system case is refused before the device is built
    throw UsageError(fmt::format("--topology: ring asked with --cluster-axis {}, whose groups have 2 chips; a 2-chip "
                                 "ring must run as a line (tt-metal issue #12770); use --topology line",
                                 options.cluster_axis.value_or(0)));
  }
  if (ring && options.cluster_axis) {
    // The whole-system ring is refused earlier, by the fabric plan; an axis group is only a row
    // or column, which has no closing link unless the mesh wraps (a torus) along that axis.
    for (const auto& group : groups) {
      const ChipId last = group.back();
      const ChipId first = group.front();
      if (device.topology().links_between(static_cast<topo::ChipId>(last), static_cast<topo::ChipId>(first)) == 0) {
        throw UsageError(fmt::format("--topology: ring asked with --cluster-axis {}, but group {} has no link closing "
                                     "it (chips {} and {} are not neighbours); use --topology line",
                                     *options.cluster_axis, fmt::join(group, ","), last, first));
      }
    }
  }
  const ccl::CclTopology topology = ring ? ccl::CclTopology::Ring : ccl::CclTopology::Line;
  if (legacy_mode(options)) require_legacy_links(options, device.topology(), groups, topology);
  const runtime::BufferType memory = options.memory == "l1" ? runtime::BufferType::L1 : runtime::BufferType::Dram;
  const BufferPlacement placement(options, memory);
  // Intermediates and all_gather's broadcast buffers stay interleaved in --memory.
  const auto config = [&](const ccl::TensorSpec& t) { return placement.interleaved(t); };
  const std::uint32_t dim = options.dim ? *options.dim : options.shape ? 3 : gather_dim(options);
  const std::optional<std::array<std::uint32_t, 2>> input_shard =
      options.shard ? options.shard->shape : std::nullopt;
  const std::uint32_t element = ccl::element_bytes(parse_dtype(options.dtype));
  // --size in pages, refused below one page (per chip where S is split over the N chips).
  const auto checked_pages = [&](std::uint64_t pages, bool per_chip) {
    if (pages == 0 && per_chip) {
      throw_size_below_a_page_per_chip(options.size_bytes, page_bytes, n);
    }
    if (pages == 0) throw UsageError(fmt::format("--size: {} B is less than one {} B page", options.size_bytes, page_bytes));
    return pages;
  };
  // What every collective's params take from the run: the shape, links, groups and the device's fabric.
  const auto set_placement = [&](auto& p) {
    p.topology = topology;
    p.num_links = options.links;
    p.groups = selection;
    p.fabric = device.fabric();
  };
  PreparedOp op;
  op.group_size = n;
  op.groups = groups;
  // The op's input and output: sharded when --shard asks, recording each one's shard.
  const auto input_config = [&](const ccl::TensorSpec& t) {
    return placement.of(t, "input", options.shard, input_shard, "--shard", &op.input_shard);
  };
  const auto output_config = [&](const ccl::TensorSpec& t, OutputAlongDim along_dim) {
    return placement.of(t, "output", placement.output_request(), output_shard_of(options, dim, n, along_dim),
                        options.output_memory ? "--out-shard" : "--shard", &op.output_shard);
  };

  if (options.op == CollectiveOp::AllGather) {
    // S = the gathered output; each chip holds S / N.
    ccl::all_gather::Params p;
    p.input = options.shape ? gathered_input(options, dim, n)
                            : tensor_of_pages(options, checked_pages(options.size_bytes / (page_bytes * n), true));
    p.dim = dim;
    set_placement(p);
    p.mode = legacy_mode(options) ? ccl::CclMode::Legacy : ccl::CclMode::Fabric;
    p.ring_algorithm = ag_ring_algorithm(options.ag_ring_algorithm);
    if (options.chunks_per_sync) p.chunks_per_sync = *options.chunks_per_sync;
    if (options.workers_per_link) p.workers_per_link = *options.workers_per_link;
    p.input_buffer = buffers.create(input_config(p.input));
    const ccl::TensorSpec output = ccl::all_gather::output_spec(p, device.topology());
    op.shape = output.shape;
    p.output_buffer = buffers.create(output_config(output, OutputAlongDim::Gathered));
    for (std::uint32_t i = 0; i < ccl::all_gather::broadcast_buffer_count(p, device.topology()); ++i) {
      p.broadcast_buffers.push_back(buffers.create(ccl::all_gather::broadcast_buffer_config(p)));
    }
    if (p.mode == ccl::CclMode::Fabric) {
      p.done_semaphore = buffers.create_semaphore(ccl::all_gather::semaphore_cores(p, device.topology()),
                                                  runtime::CoreKind::Tensix, 0);
    }
    op.size_bytes = p.output_buffer.config.size_bytes;
    op.workloads = cache.get(p, device.topology(), [&] { return ccl::all_gather::build_workloads(p, device.topology()); });
    if (ccl::all_gather::needs_broadcast_fallback(p)) {
      op.algorithm = kAllGatherBroadcastFallback;
      op.algorithm_reason = ccl::all_gather::broadcast_fallback_reason(p);
      op.algorithm_fallback = true;
    } else if (p.mode == ccl::CclMode::Fabric) {
      // Legacy mode runs its EDM all_gather, neither relay nor multicast: no choice to record.
      const ccl::all_gather::RingAlgorithmChoice choice = ccl::all_gather::ring_algorithm_choice(p);
      op.algorithm = ccl::all_gather::to_string(choice.algorithm);
      op.algorithm_reason = choice.reason;
    }
    const GroupInputs in = write_group_inputs(options, device, selection, p.input_buffer, false);
    op.verify = verifier(device, single_output(p.output_buffer), in, page_bytes, element,
                         [&](const std::vector<ChipId>&, const std::vector<Bytes>& by_rank) {
                           return RankOutputs(by_rank.size(), {share(ccl::reference::concat(by_rank, p.input, dim))});
                         });
  } else if (options.op == CollectiveOp::AllBroadcast) {
    // S = the N output buffers of one chip, as all_gather's output (each chip's input is S / N).
    ccl::all_broadcast::Params p;
    p.input = options.shape ? tensor_of_shape(options, *options.shape)
                            : tensor_of_pages(options, checked_pages(options.size_bytes / (page_bytes * n), true));
    op.shape = p.input.shape;
    set_placement(p);
    p.input_buffer = buffers.create(input_config(p.input));
    std::vector<OutputBuffer> outputs;
    for (std::uint32_t i = 0; i < ccl::all_broadcast::output_buffer_count(p, device.topology()); ++i) {
      p.output_buffers.push_back(buffers.create(output_config(p.input, OutputAlongDim::Same)));
      outputs.push_back(OutputBuffer{fmt::format("output {}", i), p.output_buffers.back()});
    }
    p.done_semaphore = buffers.create_semaphore(ccl::all_broadcast::semaphore_cores(p, device.topology()),
                                                runtime::CoreKind::Tensix, 0);
    op.size_bytes = p.input_buffer.config.size_bytes * p.output_buffers.size();
    op.workloads = cache.get(p, device.topology(), [&] { return ccl::all_broadcast::build(p, device.topology()); });
    const GroupInputs in = write_group_inputs(options, device, selection, p.input_buffer, false);
    // Every chip holds every rank's input, rank i's in output i.
    op.verify = verifier(device, std::move(outputs), in, page_bytes, element, [](const std::vector<ChipId>&, const std::vector<Bytes>& by_rank) {
      std::vector<SharedBytes> per_output;
      for (Bytes& b : ccl::all_broadcast::reference_outputs(by_rank)) per_output.push_back(share(std::move(b)));
      return RankOutputs(by_rank.size(), per_output);
    });
  } else if (options.op == CollectiveOp::ReduceScatter) {
    // S = each chip's input; it splits into N slices along dim.
    ccl::reduce_scatter::Params p;
    p.input = options.shape ? tensor_of_shape(options, *options.shape)
                            : tensor_of_pages(options, checked_pages(options.size_bytes / (page_bytes * n) * n, true));
    op.shape = p.input.shape;
    require_split_along_dim(options, p.input, dim, n, "slices");
    p.dim = dim;
    set_placement(p);
    p.line_algorithm = rs_line_algorithm(options.rs_line_algorithm);
    p.ring_algorithm = rs_ring_algorithm(options.rs_ring_algorithm);
    if (options.workers_per_link) p.workers_per_link = *options.workers_per_link;
    p.mode = legacy_mode(options) ? ccl::CclMode::Legacy : ccl::CclMode::Fabric;
    p.input_buffer = buffers.create(input_config(p.input));
    p.output_buffer = buffers.create(
        output_config(ccl::reduce_scatter::output_spec(p, device.topology()), OutputAlongDim::Scattered));
    if (ccl::reduce_scatter::needs_intermediate(p, device.topology())) {
      p.intermediate_buffer = buffers.create(config(ccl::reduce_scatter::intermediate_spec(p, device.topology())));
    }
    if (p.mode == ccl::CclMode::Fabric) {
      p.barrier_semaphore = buffers.create_semaphore(
          ccl::reduce_scatter::semaphore_cores(p, device.topology()), runtime::CoreKind::Tensix, 0);
    }
    op.size_bytes = p.input_buffer.config.size_bytes;
    op.workloads = cache.get(p, device.topology(), [&] { return ccl::reduce_scatter::build(p, device.topology()); });
    // A fabric ring chooses (one-shot or chain); a line runs the line algorithm asked; legacy
    // mode runs its EDM chain: no choice to record.
    if (p.mode == ccl::CclMode::Fabric && p.topology == ccl::CclTopology::Ring) {
      const ccl::reduce_scatter::RingAlgorithmChoice choice = ccl::reduce_scatter::ring_algorithm_choice(p);
      op.algorithm = rs_ring_algorithm_name(choice.algorithm);
      op.algorithm_reason = choice.reason;
    } else if (p.mode == ccl::CclMode::Fabric) {
      op.algorithm = options.rs_line_algorithm;
      op.algorithm_reason = "a line runs --rs-line-algorithm's (two_sided by default)";
    }
    const GroupInputs in = write_group_inputs(options, device, selection, p.input_buffer, true);
    op.verify = verifier(device, single_output(p.output_buffer), in, page_bytes, element,
                         [&](const std::vector<ChipId>& group, const std::vector<Bytes>& by_rank) {
                           return one_output_each(
                               ccl::reduce_scatter::reference_outputs(p, device.topology(), group, by_rank));
                         });
  } else if (options.op == CollectiveOp::Reduce) {
    // S = the tensor on every chip and on the root after (nccl-tests reduce).
    if (options.root >= n) {
      throw UsageError(fmt::format("--root: {} is not a rank of a group of {} chips; expected 0..{}", options.root, n, n - 1));
    }
    ccl::reduce::Params p;
    p.tensor = options.shape ? tensor_of_shape(options, *options.shape)
                             : tensor_of_pages(options, checked_pages(options.size_bytes / page_bytes, false));
    op.shape = p.tensor.shape;
    p.root = options.root;
    set_placement(p);
    p.input_buffer = buffers.create(input_config(p.tensor));
    p.output_buffer = buffers.create(output_config(p.tensor, OutputAlongDim::Same));
    p.barrier_semaphore = buffers.create_semaphore(ccl::reduce::semaphore_cores(p, device.topology()),
                                                   runtime::CoreKind::Tensix, 0);
    op.size_bytes = p.input_buffer.config.size_bytes;
    op.workloads = cache.get(p, device.topology(), [&] { return ccl::reduce::build(p, device.topology()); });
    const GroupInputs in = write_group_inputs(options, device, selection, p.input_buffer, true);
    // Only the root's output is defined (nccl's reduce): the other ranks are not read.
    op.verify = verifier(device, single_output(p.output_buffer), in, page_bytes, element,
                         [&](const std::vector<ChipId>& group, const std::vector<Bytes>& by_rank) {
                           RankOutputs per_rank(by_rank.size());
                           per_rank.at(p.root) = {
                               share(ccl::reduce::reference_output(p, device.topology(), group, by_rank))};
                           return per_rank;
                         });
  } else if (options.op == CollectiveOp::AllToAll) {
    // S = B, each chip's tensor (nccl-tests alltoall, REFERENCE 14): N chunks along dim.
    ccl::all_to_all::Params p;
    p.tensor = options.shape ? tensor_of_shape(options, *options.shape)
                             : tensor_of_pages(options, checked_pages(options.size_bytes / (page_bytes * n) * n, true));
    op.shape = p.tensor.shape;
    require_split_along_dim(options, p.tensor, dim, n, "chunks");
    p.dim = dim;
    set_placement(p);
    if (options.rounds) p.rounds = *options.rounds;
    p.input_buffer = buffers.create(input_config(p.tensor));
    p.output_buffer = buffers.create(output_config(p.tensor, OutputAlongDim::Same));
    p.done_semaphore = buffers.create_semaphore(ccl::all_to_all::semaphore_cores(p, device.topology()),
                                                runtime::CoreKind::Tensix, 0);
    op.size_bytes = p.input_buffer.config.size_bytes;
    op.workloads = cache.get(p, device.topology(), [&] { return ccl::all_to_all::build(p, device.topology()); });
    const ccl::all_to_all::RoundsChoice rounds = ccl::all_to_all::rounds_choice(p, n);
    op.algorithm = rounds.rounds == 1 ? "sequential" : "interleaved";
    op.algorithm_reason = rounds.reason;
    const GroupInputs in = write_group_inputs(options, device, selection, p.input_buffer, false);
    op.verify = verifier(device, single_output(p.output_buffer), in, page_bytes, element,
                         [&](const std::vector<ChipId>&, const std::vector<Bytes>& by_rank) {
                           return one_output_each(ccl::all_to_all::reference_outputs(p, device.topology(), by_rank));
                         });
  } else {
    // all_reduce: S = the tensor on every chip, before and after.
    ccl::all_reduce::Params p;
    p.tensor = options.shape ? tensor_of_shape(options, *options.shape)
                             : tensor_of_pages(options, checked_pages(options.size_bytes / page_bytes, false));
    op.shape = p.tensor.shape;
    set_placement(p);
    if (options.workers_per_link) p.workers_per_link = *options.workers_per_link;
    p.mode = legacy_mode(options) ? ccl::CclMode::Legacy : ccl::CclMode::Fabric;
    p.algorithm = all_reduce_algorithm(options.all_reduce_algo);
    p.ag_ring_algorithm = ag_ring_algorithm(options.ag_ring_algorithm);
    p.rs_line_algorithm = rs_line_algorithm(options.rs_line_algorithm);
    // "auto" keeps all_reduce's default for its reduce_scatter half: the reduce_scatter's own Auto.
    if (options.rs_ring_algorithm != "auto") p.rs_ring_algorithm = rs_ring_algorithm(options.rs_ring_algorithm);
    p.input_buffer = buffers.create(input_config(p.tensor));
    p.output_buffer = buffers.create(output_config(p.tensor, OutputAlongDim::Same));
    p.intermediate_buffer = buffers.create(config(ccl::all_reduce::intermediate_spec(p, device.topology())));
    if (ccl::all_reduce::needs_rs_intermediate(p, device.topology())) {
      p.rs_intermediate_buffer =
          buffers.create(config(ccl::all_reduce::rs_intermediate_spec(p, device.topology())));
    }
    const std::vector<runtime::CoreRange> cores = ccl::all_reduce::semaphore_cores(p, device.topology());
    p.barrier_semaphore = buffers.create_semaphore(cores, runtime::CoreKind::Tensix, 0);
    p.done_semaphore = buffers.create_semaphore(cores, runtime::CoreKind::Tensix, 0);
    op.size_bytes = p.input_buffer.config.size_bytes;
    op.workloads = cache.get(p, device.topology(), [&] { return ccl::all_reduce::build(p, device.topology()); });
    const ccl::all_reduce::AlgorithmChoice choice = ccl::all_reduce::algorithm_choice(p, device.topology());
    op.algorithm = all_reduce_algorithm_name(choice.algorithm);
    op.algorithm_reason = choice.reason;
    op.algorithm_fallback = choice.fallback;
    op.algorithm_halves = all_reduce_halves(p, device.topology());
    const GroupInputs in = write_group_inputs(options, device, selection, p.input_buffer, true);
    op.verify = verifier(device, single_output(p.output_buffer), in, page_bytes, element,
                         [&](const std::vector<ChipId>& group, const std::vector<Bytes>& by_rank) {
                           return one_output_each(ccl::all_reduce::reference_outputs(p, device.topology(), group, by_rank));
                         });
  }
  // Elements: a bfp8_b tile page holds 1024 values plus shared exponents. A --shape's are its
  // logical elements, tile padding not counted.
  const std::uint64_t per_page = parse_dtype(options.dtype) == ccl::DataType::Bfloat8B ? 1024 : page_bytes / element;
  op.count = op.size_bytes / page_bytes * per_page;
  if (options.shape) op.count = std::uint64_t{op.shape[0]} * op.shape[1] * op.shape[2] * op.shape[3];
  // nccl-tests' count is per rank wherever S spans the ranks (its paramcount; REFERENCE 9:
  // all_gather's S = count x type x n, alltoall's S = count x n x type): all_gather's per-chip
  // input, reduce_scatter's per-chip output, what all_to_all sends each peer, and all_broadcast's
  // per-chip input (its S is a chip's N output buffers; with --shape that input is the shape).
  // all_reduce, reduce, broadcast and send_recv count their whole tensor.
  const bool per_rank = options.op == CollectiveOp::AllGather || options.op == CollectiveOp::ReduceScatter ||
                        options.op == CollectiveOp::AllToAll ||
                        (options.op == CollectiveOp::AllBroadcast && !options.shape);
  if (per_rank) op.count /= n;
  if (options.op == CollectiveOp::AllGather || options.op == CollectiveOp::ReduceScatter ||
      options.op == CollectiveOp::AllToAll) {
    op.dim = dim;
  }
  return op;
}

// What to run instead when a whole-system group is past the 1D fabric's reach (a route holds
// at most ccl::kMaxFabricHops hops, REFERENCE 6.5): a Galaxy's 32-chip ring refuses every op but
// all_gather, and the builders' refusal says why but not what a user can do.
// Only the axes whose groups are within reach are named: ring:64's axis 1 is the same 64 chips
// and its axis 0 has none, so it is told --chips alone.
std::string route_length_hint(const RunOptions& options, const topo::Topology& topology, std::uint32_t n_chips,
                              std::string_view refusal) {
  const bool whole_system = !options.cluster_axis && options.chips.empty();
  const bool past_reach = refusal.find(fmt::format("at most {}", ccl::kMaxFabricHops)) != std::string_view::npos;
  if (!whole_system || !past_reach || n_chips <= ccl::kMaxFabricHops + 1) return "";
  // --cluster-axis A groups the chips along mesh dimension A (0 or 1), extent(A) chips each.
  std::vector<int> axes;
  if (const auto& shape = topology.mesh_shape()) {
    for (int axis = 0; axis < std::min(shape->rank(), 2); ++axis) {
      const std::int32_t extent = shape->extent(axis);
      if (extent >= 2 && extent <= static_cast<std::int32_t>(ccl::kMaxFabricHops) + 1) axes.push_back(axis);
    }
  }
  // A ring no other ring avoids a down link by runs as a line around it (fabric_reembed.hpp),
  // whose multicasts reach further than a ring's: say why the group is a line.
  std::string as_line;
  if (options.topology == "ring") {
    const sim::device::SimMeshDeviceOptions config = device_options(options, true, nullptr);
    try {
      const runtime::FabricOptions fabric = sim::device::fabric_around_down_links(topology, config.fabric, config.faults);
      if (fabric.scope == runtime::FabricScope::System && !fabric.down_edges.empty()) {
        std::string specs;
        for (const sim::device::LinkDownFault& fault : options.faults.plan.link_down) {
          if (fault.at == sim::SimTime::zero()) specs += (specs.empty() ? "" : ", ") + fault.spec;
        }
        as_line = fmt::format(" (a line: the ring runs as one around {}, which no other ring avoids)", specs);
      }
    } catch (const std::exception&) {  // a fabric that cannot be laid was refused before the op was built
    }
  }
  const std::string past = fmt::format("; {}'s whole-system group of {} chips{} is past the 1D fabric's reach: ",
                                       options.system, n_chips, as_line);
  if (axes.size() == 2) return past + "run it along one axis of the mesh (--cluster-axis 0 or 1) or on fewer chips (--chips)";
  if (axes.size() == 1) {
    return past + fmt::format("run it along axis {} of the mesh (--cluster-axis {}: groups of {} chips) or on fewer "
                              "chips (--chips)",
                              axes.front(), axes.front(), topology.mesh_shape()->extent(axes.front()));
  }
  return past + fmt::format("run it on at most {} chips (--chips); no --cluster-axis of it has groups of 2 to {}",
                            ccl::kMaxFabricHops + 1, ccl::kMaxFabricHops + 1);
}

// The shapes an op's groups run as, which can differ from --topology: in fabric mode a group
// runs as a ring only where it is the whole of a fabric ring of 3 or more chips (what
// map_group_onto_fabric lays a ring onto, and where broadcast multicasts both ways); every other
// group is a line, e.g. a 2-chip row or column of the per-axis fabric, whose plan makes it a line
// (REFERENCE 3.2, tt-metal #12770), or send_recv's pair. `fabric` is the shape of the fabric
// lines holding the groups (empty in legacy mode, which has no fabric: its groups are what
// --topology asked, resolve_legacy_groups having checked they can be).
struct GroupShapes {
  std::string groups;
  std::string fabric;
};

GroupShapes group_shapes(const RunOptions& options, const runtime::FabricPlan& plan,
                         const std::vector<std::vector<ChipId>>& groups) {
  if (legacy_mode(options)) return {options.topology, ""};
  bool groups_are_rings = true;
  bool fabric_is_ring = true;
  for (const std::vector<ChipId>& group : groups) {
    const std::optional<std::uint32_t> index = plan.line_containing(group);
    CCLMESH_CHECK(index.has_value(), "a group the op ran on lies on no fabric line");
    const runtime::FabricLine& line = plan.lines()[*index];
    const bool ring_line = line.mode == runtime::FabricMode::Ring;
    fabric_is_ring = fabric_is_ring && ring_line;
    groups_are_rings = groups_are_rings && ring_line && group.size() >= 3 && group.size() == line.chips.size();
  }
  return {groups_are_rings ? "ring" : "line", fabric_is_ring ? "ring" : "line"};
}

}  // namespace

// --topology auto: a ring where the groups the run would use close into rings of 3 or more
// chips, else a line. tt-metal's all_gather runs 2 devices as a line itself (REFERENCE 3.2); an
// explicit --topology ring on 2 chips, or on a row with no closing link, is still refused.
std::string resolve_topology(const RunOptions& options, const topo::Topology& topology) {
  if (options.topology != "auto") return options.topology;
  const auto links = static_cast<std::int32_t>(options.links);
  try {
    if (!options.chips.empty()) {
      // A ring where the chips close into one of 3 or more: the last one's neighbour is the first,
      // over the --links asked (as the whole-system ring is looked for on them).
      const bool closes = options.chips.size() >= 3 &&
                          topology.links_between(static_cast<topo::ChipId>(options.chips.back()),
                                                 static_cast<topo::ChipId>(options.chips.front())) >= options.links;
      return closes ? "ring" : "line";
    }
    if (options.cluster_axis) {
      for (const auto& group : topo::axis_groups(topology, *options.cluster_axis)) {
        if (group.size() < 3) return "line";
      }
      topo::find_axis_rings(topology, *options.cluster_axis, links);
    } else {
      if (topology.chips().size() < 3) return "line";
      topo::find_system_ring(topology, links);
    }
    return "ring";
  } catch (const topo::EmbeddingError&) {
    return "line";
  } catch (const topo::InputError&) {
    return "line";  // a bad --cluster-axis or --links: reported below with the option named, as for a line
  }
}

namespace {

// The options that decide the buffers, for a refusal of them.
const char* memory_options_named(const RunOptions& options) {
  if (options.output_memory) return "--memory/--shard/--out-shard";
  if (options.shard) return "--memory/--shard";
  return options.shape ? "--shape/--memory" : "--size/--memory";
}

// --links above every neighbour edge's link count: no line or ring can have that many per hop,
// whatever the chips. Said naming --links and what the system has; the embedding search's
// "no line ... the chips are not connected" named --system/--topology/--cluster-axis instead.
// Legacy mode has its own, which names the group and its narrowest hop (require_legacy_links).
void reject_links_above_every_edge(const RunOptions& options, const topo::Topology& topology) {
  if (legacy_mode(options)) return;
  std::size_t most = 0;
  for (const topo::NeighbourEdge& edge : topology.edges()) most = std::max(most, edge.multiplicity());
  if (options.links <= most || most == 0) return;
  throw UsageError(fmt::format("--links: {} link(s) per hop asked; {}'s neighbour edges have at most {} link(s) "
                               "each; expected 1 to {}",
                               options.links, topology.name(), most, most));
}

// --size below one page per chip, refused before the device is built (the same message as
// prepare_collective's): a 128x128 mesh's device cost ~8 s and ~6 GB before that refusal. Only where the group
// size follows from the options and the mesh alone (every chip on the mesh); elsewhere
// prepare_collective refuses it as before.
void reject_size_below_a_page_per_chip(const RunOptions& options, const topo::Topology& topology,
                                       std::uint32_t n_chips) {
  const bool split_per_chip = options.op == CollectiveOp::AllGather || options.op == CollectiveOp::AllBroadcast ||
                              options.op == CollectiveOp::ReduceScatter || options.op == CollectiveOp::AllToAll;
  if (options.shape || !split_per_chip) return;
  const auto& shape = topology.mesh_shape();
  const bool whole_mesh = shape && static_cast<std::int64_t>(topology.chip_count()) == shape->chip_count();
  std::uint64_t n = n_chips;
  if (options.cluster_axis) {
    if (!whole_mesh || *options.cluster_axis < 0 || *options.cluster_axis >= shape->rank()) return;
    n = static_cast<std::uint64_t>(shape->extent(*options.cluster_axis));
  } else if (options.chips.empty() && !whole_mesh) {
    return;
  }
  if (n < 2) return;
  const std::uint64_t page_bytes = page_bytes_of(options);
  if (options.size_bytes / (page_bytes * n) == 0) {
    throw_size_below_a_page_per_chip(options.size_bytes, page_bytes, n);
  }
}

// When the op's kernels ran, from the profile entries the op added (from profile_begin on).
// time: the op's worker (Tensix) kernels, first start to last end. launch: the longest any
// kernel took from its start until its part of the data path was up: a worker until its
// fabric connections are open, a legacy EDM until it has handshaken with its peer. Per kernel,
// so a composite op's later phase and a launch skew do not count as set-up. Fabric routers
// were up before the op (launched once with the device) and are not in it.
struct OpTimes {
  std::int64_t first_start_ns = std::numeric_limits<std::int64_t>::max();
  std::int64_t last_end_ns = 0;
  std::int64_t longest_setup_ns = 0;
};

OpTimes op_times(const std::vector<runtime::KernelProfile>& profile, std::size_t profile_begin) {
  OpTimes t;
  for (std::size_t i = profile_begin; i < profile.size(); ++i) {
    const runtime::KernelProfile& kernel = profile[i];
    if (kernel.ready_ns) {
      t.longest_setup_ns = std::max(t.longest_setup_ns, static_cast<std::int64_t>(*kernel.ready_ns - kernel.start_ns));
    }
    if (kernel.core_kind != runtime::CoreKind::Tensix) continue;
    t.first_start_ns = std::min<std::int64_t>(t.first_start_ns, static_cast<std::int64_t>(kernel.start_ns));
    t.last_end_ns = std::max<std::int64_t>(t.last_end_ns, static_cast<std::int64_t>(kernel.end_ns));
  }
  return t;
}

// What the op put on each wire: the device's link counters after it less before it, and each
// wire's busy time as a share of the op's (first kernel start to last kernel end). None, and
// links_measured false, when the device does not measure its links.
void set_links_used(RunResult& result, const std::optional<std::vector<runtime::LinkTraffic>>& before,
                    const std::optional<std::vector<runtime::LinkTraffic>>& after, const OpTimes& times) {
  result.links_used.clear();
  result.links_measured = before.has_value() && after.has_value();
  if (!result.links_measured) return;
  CCLMESH_CHECK(before->size() == after->size(), "link traffic: the device's links changed during the op");
  const double op_ps = static_cast<double>(times.last_end_ns - times.first_start_ns) * 1e3;
  for (std::size_t i = 0; i < after->size(); ++i) {
    const runtime::LinkTraffic& from = (*before)[i];
    const runtime::LinkTraffic& to = (*after)[i];
    CCLMESH_CHECK(from.chip == to.chip && from.channel == to.channel && from.peer_chip == to.peer_chip &&
                      from.peer_channel == to.peer_channel && from.payload_bytes <= to.payload_bytes &&
                      from.busy_ps <= to.busy_ps,
                  "link traffic: the device's readings before and after the op are not of the same links in order");
    LinkDirectionUse u;
    u.chip = static_cast<std::int32_t>(to.chip);
    u.channel = static_cast<std::int32_t>(to.channel);
    u.peer_chip = static_cast<std::int32_t>(to.peer_chip);
    u.peer_channel = static_cast<std::int32_t>(to.peer_channel);
    u.payload_bytes = static_cast<std::int64_t>(to.payload_bytes - from.payload_bytes);
    u.busy_ps = static_cast<std::int64_t>(to.busy_ps - from.busy_ps);
    u.utilisation = op_ps > 0 ? static_cast<double>(u.busy_ps) / op_ps : 0.0;
    result.links_used.push_back(u);
  }
}

// The fabric's rings (a per-axis fabric's rows and columns, or the whole-system ring) that ran as
// lines around a link down from the start, for the line under the table: which one, in its own
// order (a row or column in coordinate order; a ring in Ring mode, else the line the fabric would
// have run, which the down link is on), the line it ran as, the link and its fault, and whether
// it holds one of the op's groups (a row opened under an op along the columns does not; the
// whole-system ring is the op's group).
std::vector<std::string> rings_run_as_lines(const runtime::FabricPlan& plan, const RunOptions& options) {
  std::vector<std::string> notes;
  for (const runtime::FabricLine& line : plan.lines()) {
    if (!line.opened_at) continue;
    const auto [last, first] = *line.opened_at;
    std::string spec;
    for (const sim::device::LinkDownFault& fault : options.faults.plan.link_down) {
      if ((fault.a == last && fault.b == first) || (fault.a == first && fault.b == last)) spec = fault.spec;
    }
    const std::vector<ChipId>& unopened = line.opened_from;
    CCLMESH_CHECK(unopened.size() == line.chips.size(), "an opened fabric line is not the chips of what it opens");
    const std::string unfaulted =
        plan.mode() == runtime::FabricMode::Ring
            ? fmt::format("ring {}-{}", fmt::join(unopened, "-"), unopened.front())
            : fmt::format("line {}", fmt::join(unopened, "-"));
    const std::string closing = plan.mode() == runtime::FabricMode::Ring
                                    ? ""
                                    : fmt::format(" over its closing link {}-{}", unopened.back(), unopened.front());
    // The whole-system fabric opens its ring only when no other ring avoids the link (T3K
    // without 0-1 runs another ring): say so, as the reason the run is a line.
    const std::string which =
        !line.axis ? fmt::format("the op's group, which ran as that line{}",
                                 plan.mode() == runtime::FabricMode::Ring
                                     ? fmt::format(" (no other ring through all {} chips avoids the link)",
                                                   unopened.size())
                                     : "")
        : line.axis == options.cluster_axis ? "one of the op's groups, which ran as that line"
                                            : "not one of the op's groups, which did not use it";
    notes.push_back(fmt::format("{}{} ran as line {}{}: link {}-{} is down ({}); {}",
                                line.axis ? fmt::format("axis {} ", *line.axis) : "", unfaulted,
                                fmt::join(line.chips, "-"), closing, last, first, spec, which));
  }
  return notes;
}

// What a run reports on any device: the op as run, its times (dispatch: from `enqueued_us`,
// device time, until the first kernel starts; the host's dispatch gap, REFERENCE 1.8) and
// bandwidths.
RunResult op_result(const RunOptions& options, runtime::MeshDevice& device, const runtime::FabricPlan& plan,
                    const PreparedOp& op, const topo::Topology& topology, const OpTimes& t, double enqueued_us) {
  RunResult result;
  result.op = to_string(options.op);
  result.system = options.system;
  result.n_chips = op.group_size;
  const GroupShapes shapes = group_shapes(options, plan, op.groups);
  result.topology = shapes.groups;
  result.fabric_topology = shapes.fabric;
  result.links = options.links;
  // A ring's data moves both ways round it (REFERENCE 9); a line's, each link one way per byte.
  result.directions = result.topology == "ring" ? 2 : 1;
  result.mode = options.mode;
  result.dtype = options.dtype;
  result.redop = (options.op == CollectiveOp::ReduceScatter || options.op == CollectiveOp::AllReduce ||
                  options.op == CollectiveOp::Reduce)
                     ? "sum"
                     : "none";
  result.size_bytes = op.size_bytes;
  result.count = op.count;
  result.shape = op.shape;
  result.dim = op.dim;
  result.algorithm = op.algorithm;
  result.algorithm_reason = op.algorithm_reason;
  result.algorithm_fallback = op.algorithm_fallback;
  result.algorithm_halves = op.algorithm_halves;
  result.tensor_asked =
      options.shape || options.dim || options.shard || options.output_memory || options.layout_or_memory_asked;
  result.layout = options.layout;
  result.memory = options.memory;
  if (options.shard) {
    result.memory_layout = options.shard->layout + "_sharded";
    result.shard = options.shard;
    result.input_shard = op.input_shard;
  }
  const std::optional<ShardRequest>& output_request =
      options.output_memory ? options.output_memory->shard : options.shard;
  if (output_request) {
    result.output_memory_layout = output_request->layout + "_sharded";
    result.output_shard_request = output_request;
    result.output_shard = op.output_shard;
  }
  result.time_us = static_cast<double>(t.last_end_ns - t.first_start_ns) / 1e3;
  result.dispatch_us = static_cast<double>(t.first_start_ns) / 1e3 - enqueued_us;
  result.launch_us = static_cast<double>(t.longest_setup_ns) / 1e3;
  result.line_rate_GBps = static_cast<double>(topology.links().front().rate_bytes_per_s) / 1e9;
  result.link_whatif = topo::links_off_arch_defaults(topology);
  result.bandwidth = compute_bandwidth(
      {options.op, op.size_bytes, op.group_size, result.time_us, result.links, result.directions, result.line_rate_GBps});
  result.faults = options.faults.specs;
  for (const runtime::FabricLine& line : plan.lines()) {
    if (!result.fabric_order.empty()) result.fabric_order += " | ";
    for (std::size_t i = 0; i < line.chips.size(); ++i) {
      result.fabric_order += fmt::format("{}{}", i == 0 ? "" : "-", line.chips[i]);
    }
  }
  result.rings_as_lines = rings_run_as_lines(plan, options);
  result.chips = options.chips;
  result.cluster_axis = options.cluster_axis;
  if (!options.chips.empty()) result.fabric = fmt::format("chips {}", fmt::join(options.chips, "-"));
  if (plan.scope() == runtime::FabricScope::Axes) {
    const std::size_t groups = run_groups(options, device, {options.cluster_axis, {}}).size();
    // Legacy mode has no fabric (each op launches its own EDMs): only the groups are named.
    result.fabric = fmt::format("{}{} group{} along cluster_axis {}", legacy_mode(options) ? "" : "per-axis fabric: ",
                                groups, groups == 1 ? "" : "s", *options.cluster_axis);
  }
  return result;
}

// The outputs read back and compared with the host reference (nothing with --no-data).
void check_op(const PreparedOp& op, RunResult& result) {
  if (!op.verify) return;
  const Check check = op.verify();
  result.verified = check.wrong_elements == 0;
  result.wrong_elements = check.wrong_elements;
  result.mismatch = check.first_mismatch;
  result.checksums = check.checksums;
}

// The op's workloads enqueued and finished. A CB the device cannot place beside the buffers
// asked for (CBs that do not fit below large L1 buffers) is the memory config, not a fault of
// the run; any other placement error is a builder's bug and stays an internal error.
void run_op(runtime::MeshDevice& device, const PreparedOp& op, const RunOptions& requested) {
  try {
    device.enqueue_workloads(*op.workloads);  // all or none: a refusal leaves nothing to run
  } catch (const runtime::WorkloadPlacementError& e) {
    throw UsageError(fmt::format("{}: the device cannot place the op: {}", memory_options_named(requested), e.what()));
  }
  device.finish();
}

// Bad input found while the op is prepared, named by the options that decide it.
template <class Prepare>
PreparedOp prepared_or_usage_error(const RunOptions& requested, const RunOptions& options,
                                   const topo::Topology& topology, std::uint32_t n_chips, Prepare prepare) {
  try {
    return prepare();
  } catch (const topo::InputError& e) {
    throw UsageError(fmt::format("--system/--topology/--cluster-axis: {}", e.what()));
  } catch (const runtime::BufferConfigError& e) {
    throw UsageError(fmt::format("{}: {}", memory_options_named(requested), e.what()));
  } catch (const runtime::FabricPlanError& e) {
    throw UsageError(fmt::format("--system/{}--topology/--links/--fabric-payload/--fabric-rx-in-flight: {}",
                                 options.chips.empty() ? "" : "--chips/", e.what()));
  } catch (const ccl::RingRunsAsLineError& e) {
    std::string specs;
    for (const sim::device::LinkDownFault& fault : options.faults.plan.link_down) {
      if (fault.at == sim::SimTime::zero()) specs += (specs.empty() ? "" : ", ") + fault.spec;
    }
    // A client does not choose the served fabric's shape (run --device refuses --topology).
    const std::string served =
        options.device.empty() ? "" : " (on a served device the server lays the fabric: cclmesh serve --topology line)";
    throw runtime::DeviceError(runtime::DeviceError::Kind::Fault,
                               fmt::format("fault {} at 0 s: {}{}", specs, e.what(), served));
  } catch (const ccl::PageExceedsPacketError& e) {
    throw UsageError(fmt::format("--fabric-payload: {}; expected a payload of at least the page", e.what()));
  } catch (const std::invalid_argument& e) {  // CclParamsError
    throw UsageError(fmt::format("{}{}", e.what(), route_length_hint(options, topology, n_chips, e.what())));
  }
}

// The op's buffers are created through `buffers`, which gives them back after (OpBuffers).
// `cache` answers a second preparation of the same op (plan_before_building's, then the run's).
PreparedOp prepare_op(const RunOptions& options, runtime::MeshDevice& device, OpBuffers& buffers, bool ring,
                      WorkloadCache& cache) {
  return (options.op == CollectiveOp::SendRecv || options.op == CollectiveOp::Broadcast)
             ? prepare_pair_op(options, device, buffers, cache)
             : prepare_collective(options, device, buffers, ring, cache);
}

// The op prepared timing-only on a device that places it as the simulator would but builds no
// chip, and its workloads placed there: every refusal the topology and the options decide (links
// a hop lacks, a ring without its closing link, a route past the fabric's reach, a buffer or CB
// that does not fit, a fabric no line avoids a down link by) comes, with the device's message,
// before the simulated device is built: a 64x64 mesh's took ~20 s and ~6.7 GB first.
void plan_before_building(const RunOptions& requested, const RunOptions& options, const topo::Topology& topology,
                          std::uint32_t n_chips, bool ring, WorkloadCache& cache) {
  RunOptions timing_only = options;
  timing_only.no_data = true;  // the planning device holds no data: nothing is written or checked
  std::unique_ptr<sim::device::PlanningMeshDevice> planner;
  std::unique_ptr<OpBuffers> planned_buffers;
  const PreparedOp planned = prepared_or_usage_error(requested, options, topology, n_chips, [&] {
    const sim::device::SimMeshDeviceOptions config = device_options(options, ring, nullptr);
    planner = std::make_unique<sim::device::PlanningMeshDevice>(topology, config.fabric, config.faults,
                                                                config.data_mode);
    planned_buffers = std::make_unique<OpBuffers>(*planner);  // not freed: the planner is dropped after
    return prepare_op(timing_only, *planner, *planned_buffers, ring, cache);
  });
  run_op(*planner, planned, requested);
}

// The topology the op runs as on a served fabric: the fabric's own shape, or along a per-axis
// fabric (serve --fabric-scope axes) the shape of the lines along --cluster-axis (a ring where
// every one of them is one). A device without a fabric (legacy mode) runs as `--topology` says.
std::string served_topology(const RunOptions& options, const topo::Topology& topology,
                            const runtime::FabricOptions& fabric) {
  if (fabric.mode == runtime::FabricMode::None) return resolve_topology(options, topology);
  if (fabric.scope == runtime::FabricScope::System) {
    if (options.cluster_axis) {
      throw UsageError(fmt::format("--cluster-axis: the served device's fabric is one {} through every chip; ops "
                                   "along a mesh axis need a fabric per axis (cclmesh serve --fabric-scope axes)",
                                   runtime::to_string(fabric.mode)));
    }
    return fabric.mode == runtime::FabricMode::Ring ? "ring" : "line";
  }
  if (!options.cluster_axis) {
    throw UsageError("--cluster-axis: the served device's fabric runs one line or ring per mesh row and column "
                     "(serve --fabric-scope axes); give --cluster-axis 0 or 1, the axis the op runs along");
  }
  const runtime::FabricPlan plan = [&] {
    try {
      return runtime::FabricPlan(topology, fabric);
    } catch (const std::invalid_argument& e) {  // the server built it, so this is the server's bug
      throw std::runtime_error(fmt::format("the served fabric does not plan here: {}", e.what()));
    }
  }();
  // A ring opened into a line around a down link (FabricLine::opened_at) counts as a ring: the
  // device laid the rings a local `run --topology ring` lays, and that run's op runs such a
  // group as a line and the others as rings (groups_by_shape). Counted as a line, it made the
  // op run every group as a line on the ring fabric, which no local run does (20.89 us against
  // the local 20.87 at 256 KiB, torus:4x4 all_gather along axis 1 with 3-0 down). On a line
  // fabric (serve --topology line) a line run over its closing link is opened too, and stays a
  // line (review: counted as a ring, the client's refusals of it read as a ring's).
  const bool ring_fabric = fabric.mode == runtime::FabricMode::Ring;
  bool any = false;
  bool every_one_a_ring = true;
  for (const runtime::FabricLine& line : plan.lines()) {
    if (line.axis != *options.cluster_axis) continue;
    any = true;
    every_one_a_ring = every_one_a_ring && (line.mode == runtime::FabricMode::Ring ||
                                            (ring_fabric && line.opened_at.has_value()));
  }
  return any && every_one_a_ring ? "ring" : "line";
}

// Runs an op (`run`: prepare, run, read back and check) and gives its buffers back after: once
// it completed, and when bad input stopped it midway, so that a skipped sweep point leaves a
// served device as it found it. Not after a DeviceError: the device is failed until its reset,
// which frees everything; nor after a RemoteDeviceError: the session is gone.
template <class Run>
RunResult with_buffers_given_back(OpBuffers& buffers, Run run) {
  RunResult result;
  try {
    result = run();
  } catch (const UsageError&) {
    buffers.free_all_quietly();
    throw;
  }
  buffers.free_all();
  return result;
}

}  // namespace

std::unique_ptr<runtime::remote::RemoteMeshDevice> connect_device(const RunOptions& options) {
  try {
    const auto [host, port] = runtime::remote::parse_endpoint(options.device);
    runtime::remote::RemoteDeviceOptions remote;
    remote.busy_wait = std::chrono::milliseconds(std::llround(options.device_wait_s * 1000.0));
    // Said once, so a run that waits for another client's session does not look stuck.
    remote.on_busy = [seconds = options.device_wait_s](const std::string& why) {
      fmt::print(stderr, "cclmesh: {}; waiting up to {:g} s for it to end (--device-wait)\n", why, seconds);
      std::fflush(stderr);
    };
    return std::make_unique<runtime::remote::RemoteMeshDevice>(host, port, remote);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--device: {}", e.what()));
  } catch (const runtime::remote::ServerBusyError& e) {
    throw UsageError(fmt::format("--device: {} (--device-wait SECONDS waits longer)", e.what()));
  } catch (const runtime::remote::RemoteDeviceError& e) {
    throw UsageError(fmt::format("--device: {}", e.what()));
  }
}

// The op on a served device (cclmesh serve), whose system, mode, fabric (device.fabric()) and
// data mode are the server's; the run path's simulator extras (wires, faults, traces) were
// refused with the option (device_options_check.cpp); the op's event count is the server's.
RunOptions served_run_options(const RunOptions& requested, const runtime::remote::RemoteMeshDevice& device) {
  const topo::Topology& topology = device.topology();
  const runtime::FabricOptions& fabric = device.fabric();
  // The server decided what `cclmesh run` takes from --system, --mode, --topology, --links,
  // --no-data (a timing-only device: nothing written, nothing checked, #wrong N/A) and the
  // fabric's settings (--fabric-payload, --fabric-rx-in-flight, --erisc-unreserved-kib).
  RunOptions options = requested;
  options.no_data = device.data_mode() == runtime::remote::ServedDataMode::TimingOnly;
  options.system = device.system_name();
  options.mode = fabric.mode == runtime::FabricMode::None ? "legacy" : "fabric";
  options.links = fabric.mode == runtime::FabricMode::None ? 1 : fabric.num_links;
  options.topology = served_topology(options, topology, fabric);
  // A fabric laid through some chips only (serve --chips): the op runs on them, as a local
  // `run --chips` does (a fabric re-embedded around a down link still runs through every chip).
  if (fabric.mode != runtime::FabricMode::None && fabric.scope == runtime::FabricScope::System &&
      !fabric.chip_order.empty() && fabric.chip_order.size() < topology.chips().size()) {
    options.chips.assign(fabric.chip_order.begin(), fabric.chip_order.end());
  }
  // The row names the faults the device runs under, as a local run's does, and what they did
  // (the server's lines). Parsed as a local run parses --fault, so what looks a fault up by its
  // link (the note of a ring run as a line, a refusal naming the fault) finds it as locally.
  options.faults = {};
  for (const std::string& spec : device.faults()) {
    try {
      add_fault_spec(options.faults, spec);
    } catch (const UsageError& e) {  // a server that knows a fault this client does not
      throw UsageError(fmt::format("--device: the served device runs under fault '{}', which this cclmesh does not "
                                   "read ({}); expected a server of the same version",
                                   spec, e.what()));
    }
  }
  options.fabric_payload_bytes = fabric.max_payload_bytes;
  options.fabric_rx_in_flight = fabric.receiver_packets_in_flight;
  options.erisc_unreserved_bytes = fabric.erisc_unreserved_bytes;
  return options;
}

RunResult run_collective_on(const RunOptions& requested, runtime::remote::RemoteMeshDevice& device) {
  const auto wall_start = std::chrono::steady_clock::now();
  const topo::Topology& topology = device.topology();
  const runtime::FabricOptions& fabric = device.fabric();
  RunOptions options = served_run_options(requested, device);
  // A served legacy device runs the op's EDMs where the client lays them, as a local run does.
  lay_legacy_group_around_down_links(options, topology);
  const auto n_chips =
      static_cast<std::uint32_t>(options.chips.empty() ? topology.chips().size() : options.chips.size());
  reject_unsupported(options, n_chips);
  const bool ring = options.topology == "ring";
  OpBuffers buffers(device);
  WorkloadCache cache;  // one preparation (no planning device here): nothing to share
  RunResult result = with_buffers_given_back(buffers, [&] {
    const PreparedOp op = prepared_or_usage_error(requested, options, topology, n_chips,
                                                  [&] { return prepare_op(options, device, buffers, ring, cache); });
    const std::optional<std::uint64_t> enqueued_ps = device.device_time_ps();
    const std::size_t profile_begin = device.profile().size();
    const std::optional<std::vector<runtime::LinkTraffic>> links_before = device.link_traffic();
    const std::optional<std::uint64_t> events_before = device.device_events();
    run_op(device, op, requested);
    const std::optional<std::uint64_t> events_after = device.device_events();
    const OpTimes times = op_times(device.profile(), profile_begin);
    // Without the device's clock the dispatch gap is unknown: NaN, printed as such.
    const double enqueued_us = enqueued_ps ? static_cast<double>(*enqueued_ps) / 1e6
                                           : std::numeric_limits<double>::quiet_NaN();
    RunResult r = op_result(options, device, runtime::FabricPlan(topology, fabric), op, topology, times, enqueued_us);
    // Counted on the server, as a local run counts them; none from a backend that counts none.
    if (events_before && events_after) r.sim_events = *events_after - *events_before;
    set_links_used(r, links_before, device.link_traffic(), times);
    check_op(op, r);
    return r;
  });
  result.settings = settings_json(options);
  result.fault_effects = with_legacy_group_note(options, device.fault_effects());
  result.op_preparations = cache.hits() + cache.builds();
  result.op_builds = cache.builds();
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

RunResult run_collective(const RunOptions& requested, sim::trace::TraceRecorder* trace) {
  if (!requested.device.empty()) return run_collective_on(requested, *connect_device(requested));
  const auto wall_start = std::chrono::steady_clock::now();
  topo::Topology topology = topo::with_every_link(load_topology(requested.system), requested.link_whatif);
  RunOptions options = requested;
  options.topology = resolve_topology(requested, topology);
  check_chips(options, topology);
  reject_links_above_every_edge(options, topology);
  require_fault_links_on(options.faults, topology);
  reject_fixed_groups_across_down_links(options, topology);
  lay_legacy_group_around_down_links(options, topology);
  const auto n_chips =
      static_cast<std::uint32_t>(options.chips.empty() ? topology.chips().size() : options.chips.size());
  reject_unsupported(options, n_chips);
  reject_size_below_a_page_per_chip(options, topology, n_chips);
  const bool ring = options.topology == "ring";
  // The op is prepared twice, on the planning device and then on the simulated one: the second
  // takes the first's workloads when its params are the same (workload_cache.hpp).
  WorkloadCache workload_cache;
  plan_before_building(requested, options, topology, n_chips, ring, workload_cache);
  const sim::BusyWindow busy_window = requested_busy_window();
  const std::optional<sim::ChipId> noc_stats_chip = requested_noc_stats_chip(topology);

  std::unique_ptr<sim::device::SimMeshDevice> device;
  std::unique_ptr<OpBuffers> buffers;
  const PreparedOp op = prepared_or_usage_error(requested, options, topology, n_chips, [&] {
    sim::device::SimMeshDeviceOptions device_config = device_options(options, ring, trace);
    device_config.busy_window = busy_window;
    device = std::make_unique<sim::device::SimMeshDevice>(topology, std::move(device_config));
    buffers = std::make_unique<OpBuffers>(*device);
    return prepare_op(options, *device, *buffers, ring, workload_cache);
  });

  const sim::EngineStats before = device->stats();
  const sim::SimTime enqueued = device->now();
  const std::size_t profile_begin = device->profile().size();
  const std::optional<std::vector<runtime::LinkTraffic>> links_before = device->link_traffic();
  run_op(*device, op, requested);
  const sim::EngineStats after = device->stats();
  const OpTimes times = op_times(device->profile(), profile_begin);

  RunResult result = op_result(options, *device, device->fabric_plan(), op, topology, times, enqueued.us());
  result.sim_events = after.events_executed - before.events_executed;
  result.simulate_wall_s = after.wall_seconds - before.wall_seconds;
  result.trace_hash = device->trace_hash();
  set_links_used(result, links_before, device->link_traffic(), times);
  if (noc_stats_chip) {
    print_noc_usage(*device, *noc_stats_chip, static_cast<double>(times.first_start_ns) / 1e3, result.time_us);
  }
  check_op(op, result);
  // The device goes with this run; freeing anyway keeps one path with a served device's run.
  buffers->free_all();
  result.settings = settings_json(options);
  result.fault_effects = with_legacy_group_note(options, device->fault_effects());
  result.op_preparations = workload_cache.hits() + workload_cache.builds();
  result.op_builds = workload_cache.builds();
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  // The device's teardown is not part of the run (wall_s): a process that exits next keeps it
  // (exit_without_teardown.hpp).
  buffers.reset();
  finish_with_device(std::move(device), trace != nullptr);
  return result;
}

}  // namespace cclmesh::cli
