#include "runtime/ccl/all_reduce/all_reduce.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_reduce/half_refusal.hpp"
#include "runtime/ccl/all_reduce/local_sum.hpp"
#include "runtime/ccl/all_reduce/one_shot.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/ccl/common/legacy_op.hpp"
#include "runtime/ccl/common/params_hash.hpp"
#include "runtime/ccl/common/reworded_refusal.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/core_map.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::runtime::ccl::all_reduce {
namespace {

constexpr const char* kOp = "all_reduce";

// "1 page", "2 pages": a tensor of one page is refused or explained too, and "1 pages" misreads.
std::string pages_text(std::uint64_t pages) { return fmt::format("{} page{}", pages, pages == 1 ? "" : "s"); }
// The verb after pages_text: "1 page does not", "2 pages do not".
const char* do_not(std::uint64_t count) { return count == 1 ? "does not" : "do not"; }

// The tensor as one row of pages, and the dim its slices are cut along.
struct Flat {
  TensorSpec spec;
  std::uint32_t dim = 3;
};

Flat flat_of(const TensorSpec& t) {
  Flat f;
  f.spec = t;
  // The caller's buffers keep the tensor's rows; the halves check them against those.
  f.spec.viewed_row_pages = t.viewed_row_pages.value_or(shape_in_pages(t).x);
  if (t.layout == Layout::Tile) {
    f.spec.shape = {1, 1, kTileSide, static_cast<std::uint32_t>(num_pages(t)) * kTileSide};
    f.dim = 3;
  } else {
    f.spec.shape = {1, 1, static_cast<std::uint32_t>(num_pages(t)), t.shape[3]};
    f.dim = 2;
  }
  return f;
}

std::uint32_t group_size(const Params& p, const topo::Topology& topology) {
  if (p.mode == CclMode::Legacy) {
    return static_cast<std::uint32_t>(resolve_legacy_groups(p.groups, topology, p.topology).front().size());
  }
  const FabricPlan plan(topology, p.fabric);
  return static_cast<std::uint32_t>(resolve_groups(p.groups, topology, plan).front().size());
}

// Rows wider than a fabric payload move in 32 B-aligned pieces in every fabric algorithm, and one
// that cannot is refused in all_reduce's name: here, before the params of either half exist, so
// that not only validate() but every call that asks a half something before build() (the
// semaphore cores and intermediates a caller sizes first) refuses it as all_reduce, not as the
// reduce_scatter or all_gather that meets it first. Legacy mode's halves move every row wider than
// an EDM buffer in 32 B-aligned pieces, the last shorter when the row is not a multiple of 32 B
// (legacy_outer_dim_row_pieces, session 40; such a row was refused here until then): nothing to refuse.
void require_fabric_rows_move(const Params& p) {
  if (p.mode == CclMode::Fabric) moved_pages(p);
}

reduce_scatter::Params rs_params(const Params& p, const Flat& f) {
  require_fabric_rows_move(p);
  reduce_scatter::Params rs;
  rs.input = f.spec;
  rs.dim = f.dim;
  rs.input_buffer = p.input_buffer;
  rs.output_buffer = p.intermediate_buffer;
  rs.intermediate_buffer = p.rs_intermediate_buffer;
  rs.line_algorithm = p.rs_line_algorithm;
  rs.ring_algorithm = p.rs_ring_algorithm;
  rs.topology = p.topology;
  rs.num_links = p.num_links;
  rs.workers_per_link = p.workers_per_link;
  rs.groups = p.groups;
  rs.mode = p.mode;
  rs.fabric = p.fabric;
  rs.barrier_semaphore = p.barrier_semaphore;
  rs.first_worker = p.first_worker;
  rs.packet_size_in_pages = p.packet_size_in_pages;
  rs.chunk_packets = p.chunk_packets;
  return rs;
}

all_gather::Params ag_params(const Params& p, const TensorSpec& input, std::uint32_t dim, const BufferHandle& in,
                             const BufferHandle& out) {
  require_fabric_rows_move(p);
  all_gather::Params ag;
  ag.input = input;
  ag.dim = dim;
  ag.input_buffer = in;
  ag.output_buffer = out;
  ag.topology = p.topology;
  ag.num_links = p.num_links;
  ag.groups = p.groups;
  ag.mode = p.mode;
  ag.fabric = p.fabric;
  ag.done_semaphore = p.done_semaphore;
  ag.first_worker = p.first_worker;
  ag.packet_size_in_pages = p.packet_size_in_pages;
  ag.ring_algorithm = p.ag_ring_algorithm;
  return ag;
}

// The all_gather of each algorithm: the reduced slices into the output, or the whole inputs
// into the intermediate buffer along a new outer dim.
all_gather::Params gather_params(const Params& p, const topo::Topology& topology, Algorithm algorithm) {
  const Flat f = flat_of(p.tensor);
  const std::uint32_t n = group_size(p, topology);
  if (algorithm == Algorithm::Composite) return ag_params(p, f.spec, 0, p.input_buffer, p.intermediate_buffer);
  return ag_params(p, with_dim_scaled(f.spec, f.dim, n, false), f.dim, p.intermediate_buffer, p.output_buffer);
}

// The composite's local sum on one chip (local_sum.hpp), its CB packet one fabric payload.
std::uint32_t local_sum_packet(const Params& p) {
  return packet_size_in_pages(p.packet_size_in_pages, moved_pages(p).page_bytes, p.fabric.max_payload_bytes);
}

// The composite's local sum: one workload with the running sums in L1 when they fit, else one
// workload per pass chained through the output (each pass's read-back behind the previous
// program's acked writes).
std::vector<MeshWorkload> local_sum_workloads(const Params& p, const topo::Topology& topology,
                                              const MeshWorkload& gather, std::uint32_t n) {
  const std::uint32_t packet = local_sum_packet(p);
  std::vector<MeshWorkload> workloads;
  if (sums_fit_in_l1(p, packet)) {
    MeshWorkload reduce;
    reduce.name = "all_reduce_local_reduce";
    for (const auto& [chip, program] : gather.programs) {
      add_local_sum(reduce.programs[chip], p, topology, chip, p.first_worker, n, packet, std::nullopt);
    }
    workloads.push_back(std::move(reduce));
    return workloads;
  }
  for (std::uint32_t pass = 1; pass < n; ++pass) {
    MeshWorkload reduce;
    reduce.name = fmt::format("all_reduce_local_reduce_pass{}", pass);
    for (const auto& [chip, program] : gather.programs) {
      add_local_sum_pass(reduce.programs[chip], p, topology, chip, p.first_worker, n, packet, pass);
    }
    workloads.push_back(std::move(reduce));
  }
  return workloads;
}

// Legacy EDM mode, for one part of the op (its groups of one shape, parts_by_shape): the composite
// up to the weighted-size threshold of that shape (all_reduce.hpp has the measurements), above it
// reduce_scatter + all_gather where the legacy reduce_scatter takes the slices, else the
// composite (its all_gather is the legacy one, its local sum needs no fabric). No one-shot: it
// multicasts over the fabric's routers, and legacy mode has none.
AlgorithmChoice legacy_algorithm_choice(const Params& part, const topo::Topology& topology) {
  if (part.algorithm == Algorithm::OneShot) {
    throw CclParamsError(fmt::format(
        "all_reduce: algorithm {} in legacy EDM mode; the one-shot multicasts through the persistent fabric's "
        "routers, and legacy mode's per-op EDMs carry only neighbour to neighbour; use {} or {}",
        to_string(Algorithm::OneShot), to_string(Algorithm::Composite), to_string(Algorithm::ReduceScatterAllGather)));
  }
  if (part.algorithm != Algorithm::Auto) return {part.algorithm, false, "asked for"};
  const std::uint32_t n = group_size(part, topology);
  // The part's shape is what its groups run as: a ring opened into a line around a down link takes
  // the line's threshold and needs, as a line it is, whatever the op's other groups run as.
  const CclTopology runs_as = part.topology;
  const std::uint64_t composite_max = part.legacy_composite_max_weighted_bytes.value_or(
      default_legacy_composite_max_weighted_bytes(runs_as, n, part.num_links));
  const std::uint64_t weighted = legacy_composite_weighted_bytes(part.tensor);
  if (weighted <= composite_max) {
    return {Algorithm::Composite, false,
            fmt::format("legacy mode: its weighted {} B are within the composite's threshold of {} B here", weighted,
                        composite_max)};
  }
  const std::uint64_t pages = num_pages(part.tensor);
  // The legacy reduce_scatter chains a ring's slice as two halves, a line's whole, each shared
  // out over the links: it needs a page per run (reduce_scatter_legacy.cpp).
  const std::uint64_t runs_per_slice = std::uint64_t{runs_as == CclTopology::Ring ? 2u : 1u} * part.num_links;
  const bool slices_fit = pages % n == 0 && pages / n >= runs_per_slice;
  if (slices_fit) {
    return {Algorithm::ReduceScatterAllGather, false,
            fmt::format("legacy mode: its weighted {} B are past the composite's threshold of {} B here", weighted,
                        composite_max)};
  }
  return {Algorithm::Composite, true,
          fmt::format("legacy mode: the {} {} split into {} slices of at least {} each, which "
                      "reduce_scatter + all_gather needs",
                      pages_text(pages), do_not(pages), n, pages_text(runs_per_slice))};
}

// The op per shape its groups run as. Legacy mode: groups_by_shape's parts (a torus row opened
// into a line around a down link beside the other rows' rings), each choosing and building its
// own algorithm; nothing to clear on the line's part (legacy_composite_max_weighted_bytes, asked,
// holds for every shape). Fabric mode: `params`, one algorithm for the op (Auto's rule there goes
// by chip count and size, not shape), whose halves split their groups by shape themselves.
// Each part of several holds its view of the op's intermediate buffer (with_part_intermediate).
Params with_part_intermediate(Params part, const topo::Topology& topology);

std::vector<Params> parts_by_shape(const Params& params, const topo::Topology& topology) {
  if (params.mode != CclMode::Legacy) return {params};
  std::vector<Params> parts = params_by_shape(params, topology, [](Params&) {});
  if (parts.size() > 1) {
    for (Params& part : parts) part = with_part_intermediate(std::move(part), topology);
  }
  return parts;
}

}  // namespace

std::string to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::Auto:
      return "auto";
    case Algorithm::ReduceScatterAllGather:
      return "reduce_scatter + all_gather";
    case Algorithm::Composite:
      return "composite (all_gather + local reduce)";
    case Algorithm::OneShot:
      return "one-shot (multicast + local reduce)";
  }
  return "unknown";
}

std::size_t hash_value(const Params& p) {
  return hash_fields(0, p.tensor, p.input_buffer, p.output_buffer, p.intermediate_buffer, p.rs_intermediate_buffer,
                     p.topology, p.num_links,
                     p.workers_per_link, p.groups, p.mode, p.fabric, p.algorithm, p.rs_line_algorithm, p.rs_ring_algorithm,
                     p.one_shot_max_bytes, p.legacy_composite_max_weighted_bytes, p.barrier_semaphore, p.done_semaphore, p.first_worker,
                     p.packet_size_in_pages, p.chunk_packets, p.ag_ring_algorithm);
}

OneShotLimits default_one_shot_limits(CclTopology topology, std::uint32_t group_size) {
  if (group_size <= 2) return kOneShotLimitsTwoChips;
  const bool short_group = group_size <= kOneShotShortGroupMaxChips;
  if (topology == CclTopology::Ring) return short_group ? kOneShotLimitsShortRing : kOneShotLimitsLongRing;
  return short_group ? kOneShotLimitsShortLine : kOneShotLimitsLongLine;
}

std::uint64_t legacy_composite_weighted_bytes(const TensorSpec& tensor) {
  return num_pages(tensor) * (page_size_bytes(tensor) + kLegacyCompositePageWeightBytes);
}

std::uint64_t legacy_composite_threshold_on_links(std::uint64_t one_link_bytes, std::uint32_t num_links,
                                                  std::uint64_t link_shared_percent) {
  const std::uint64_t links = std::max<std::uint32_t>(num_links, 1);
  return one_link_bytes * 100 * links / ((100 - link_shared_percent) * links + link_shared_percent);
}

std::uint64_t default_legacy_composite_max_weighted_bytes(CclTopology topology, std::uint32_t group_size,
                                                          std::uint32_t num_links) {
  if (topology == CclTopology::Ring) {
    return legacy_composite_threshold_on_links(kLegacyCompositeMaxWeightedBytesRing, num_links,
                                               kLegacyCompositeRingLinkSharedPercent) / 1024 * 1024;
  }
  const std::uint64_t one_link =
      std::min(kLegacyCompositeMaxWeightedBytesPerLineChip * group_size, kLegacyCompositeMaxWeightedBytesLine);
  const std::uint64_t link_shared_percent = group_size <= kLegacyCompositeShortLineMaxChips
                                                ? kLegacyCompositeShortLineLinkSharedPercent
                                                : kLegacyCompositeLongLineLinkSharedPercent;
  // Whole KiB, as measured and as the help states them.
  return legacy_composite_threshold_on_links(one_link, num_links, link_shared_percent) / 1024 * 1024;
}

namespace {

// What one part (parts_by_shape) runs and why.
AlgorithmChoice part_algorithm_choice(const Params& params, const topo::Topology& topology) {
  if (params.mode == CclMode::Legacy) return legacy_algorithm_choice(params, topology);
  if (params.algorithm != Algorithm::Auto) return {params.algorithm, false, "asked for"};
  const std::uint32_t n = group_size(params, topology);
  const std::uint64_t pages = num_pages(params.tensor);
  const std::uint64_t bytes = size_bytes(params.tensor);
  const bool pages_divide = pages % n == 0;
  // On any number of links: the one-shot multicasts over routing plane 0 only while rs-ag and
  // the composite use every link, yet at these sizes the crossovers measured on 2 and 4 links are
  // those of 1 link (ring:8/2 on 2 links 16 KiB 19.47 against rs-ag 25.02, 32 KiB 34.58 / 27.70;
  // Galaxy 4-lines on 4 links 32 KiB 20.87 / 21.83, 64 KiB 37.91 / 25.64; 8-lines 16 KiB 22.93 /
  // 34.44, 32 KiB 39.66 / 36.20), and it beats the composite there too (ring:8/2 510 KiB 483.86
  // against 691.52).
  const OneShotLimits limits = default_one_shot_limits(params.topology, n);
  const std::uint64_t max_bytes = limits.max_bytes;
  const std::uint64_t max_pages = limits.max_pages;
  const std::string not_dividing = fmt::format(
      "the {} {} divide by the {} chips, which reduce_scatter + all_gather needs", pages_text(pages), do_not(pages), n);
  if (params.one_shot_max_bytes) {
    if (bytes <= *params.one_shot_max_bytes) {
      return {Algorithm::OneShot, false, fmt::format("{} B are within the one-shot's {} B asked", bytes,
                                                     *params.one_shot_max_bytes)};
    }
    if (pages_divide) return {Algorithm::ReduceScatterAllGather, false, fmt::format("{} B are past the one-shot's {} B asked", bytes, *params.one_shot_max_bytes)};
    return {Algorithm::Composite, true, not_dividing};
  }
  if (pages_divide) {
    // A 2-chip group is a line whichever topology was asked (REFERENCE 7.6, issue #12770).
    const std::string group = fmt::format("a {} of {} chips", n <= 2 ? "line" : to_string(params.topology), n);
    if (bytes <= max_bytes && pages <= max_pages) {
      return {Algorithm::OneShot, false,
              fmt::format("{} B in {} are within the one-shot's {} B and {} pages for {}", bytes, pages_text(pages),
                          max_bytes, max_pages, group)};
    }
    return {Algorithm::ReduceScatterAllGather, false,
            fmt::format("{} B in {} are past the one-shot's {} B or {} pages for {}", bytes, pages_text(pages),
                        max_bytes, max_pages, group)};
  }
  if (one_shot::sums_fit(params)) {
    return {Algorithm::OneShot, true, not_dividing + ", and the one-shot's running sums of the whole tensor fit L1"};
  }
  return {Algorithm::Composite, true,
          not_dividing + ", and the one-shot's running sums of the whole tensor do not fit L1; a tensor of " +
              fmt::format("{} pages (a multiple of {}) runs reduce_scatter + all_gather", pages < n ? n : pages / n * n, n)};
}

Algorithm part_algorithm(const Params& part, const topo::Topology& topology) {
  return part_algorithm_choice(part, topology).algorithm;
}

}  // namespace

// The entry points that ask a half something catch its refusals and rethrow them in all_reduce's
// name (half_refusal.hpp): the caller ran an all_reduce.
std::vector<PartChoice> part_choices(const Params& params, const topo::Topology& topology) try {
  std::vector<PartChoice> choices;
  for (const Params& part : parts_by_shape(params, topology)) {
    choices.push_back({part.topology, part.groups, part_algorithm_choice(part, topology)});
  }
  return choices;
} catch (const CclParamsError&) {
  rethrow_in_all_reduce_name();
}

AlgorithmChoice algorithm_choice(const Params& params, const topo::Topology& topology) {
  return part_choices(params, topology).front().choice;
}

std::vector<HalvesChoice> halves_choices(const Params& params, const topo::Topology& topology) try {
  if (params.mode == CclMode::Legacy || resolved_algorithm(params, topology) != Algorithm::ReduceScatterAllGather) {
    return {};
  }
  // Both halves split the same groups by the same rule, rings first: part i of each is the same
  // groups.
  const std::vector<reduce_scatter::PartChoice> rs_parts =
      reduce_scatter::part_choices(rs_params(params, flat_of(params.tensor)), topology);
  const std::vector<all_gather::PartChoice> ag_parts = all_gather::part_choices(
      gather_params(params, topology, Algorithm::ReduceScatterAllGather), topology);
  CCLMESH_CHECK(rs_parts.size() == ag_parts.size(), "all_reduce: its halves split its groups into as many shapes");
  std::vector<HalvesChoice> choices;
  for (std::size_t i = 0; i < rs_parts.size(); ++i) {
    CCLMESH_CHECK(rs_parts[i].shape == ag_parts[i].shape && rs_parts[i].groups == ag_parts[i].groups,
                  "all_reduce: its halves' parts hold the same groups in the same shape");
    choices.push_back({rs_parts[i].shape, rs_parts[i].ring, rs_parts[i].line, ag_parts[i].algorithm});
  }
  return choices;
} catch (const CclParamsError&) {
  rethrow_in_all_reduce_name();
}

std::vector<all_gather::PartChoice> composite_gather_choices(const Params& params,
                                                             const topo::Topology& topology) try {
  if (params.mode == CclMode::Legacy || resolved_algorithm(params, topology) != Algorithm::Composite) return {};
  // The params build() gives the composite's gather, not a re-derived choice.
  return all_gather::part_choices(gather_params(params, topology, Algorithm::Composite), topology);
} catch (const CclParamsError&) {
  rethrow_in_all_reduce_name();
}

Algorithm resolved_algorithm(const Params& params, const topo::Topology& topology) {
  return algorithm_choice(params, topology).algorithm;
}

namespace {

// The tensor one part's intermediate buffer must hold: the N gathered copies (composite,
// one-shot) or its slice (rs-ag).
TensorSpec part_intermediate_spec(const Params& part, const topo::Topology& topology) {
  const Flat f = flat_of(part.tensor);
  const std::uint32_t n = group_size(part, topology);
  const Algorithm algorithm = part_algorithm(part, topology);
  if (algorithm == Algorithm::Composite || algorithm == Algorithm::OneShot) return with_dim_scaled(f.spec, 0, n, true);
  if (num_pages(part.tensor) % n != 0) {
    throw CclParamsError(
        fmt::format("all_reduce: {} {} split into {} equal slices for reduce_scatter + "
                    "all_gather (shape[dim] % N != 0, REFERENCE 11.15); use the composite algorithm",
                    pages_text(num_pages(part.tensor)), do_not(num_pages(part.tensor)), n));
  }
  return with_dim_scaled(f.spec, f.dim, n, false);
}

// `part` with its view of the op's intermediate buffer, which holds the largest part's tensor
// (intermediate_spec()): the buffer's first pages, as many as the part's tensor has. An
// interleaved buffer places page k by k alone (bank k mod banks, row k / banks), so the first
// pages of a larger one are where a buffer of that many pages at the same address puts them; a
// sharded one places them by its shard grid, so it must be the part's exactly.
Params with_part_intermediate(Params part, const topo::Topology& topology) {
  const std::uint64_t bytes = size_bytes(part_intermediate_spec(part, topology));
  BufferConfig& config = part.intermediate_buffer.config;
  if (config.size_bytes > bytes && config.layout == TensorMemoryLayout::Interleaved) config.size_bytes = bytes;
  return part;
}

bool part_needs_rs_intermediate(const Params& part, const topo::Topology& topology) {
  return part_algorithm(part, topology) == Algorithm::ReduceScatterAllGather &&
         reduce_scatter::needs_intermediate(rs_params(part, flat_of(part.tensor)), topology);
}

std::vector<CoreRange> part_semaphore_cores(const Params& part, const topo::Topology& topology) {
  // The all_gather's SPLIT_TENSOR takes 2 cores per link (its ring relay 2 per link and worker);
  // the reduce_scatter's are its own semaphore_cores (every part: a torus ring run as a line
  // around a down link takes the line's cores, reduce_scatter::semaphore_cores); the one-shot
  // its gather core and its reduce core. Every op's workers start at first_worker.
  const Algorithm algorithm = part_algorithm(part, topology);
  const std::size_t rs_cores =
      algorithm == Algorithm::ReduceScatterAllGather
          ? reduce_scatter::semaphore_cores(rs_params(part, flat_of(part.tensor)), topology).size()
          : 0;
  // validate() checks the one-shot's composite fallback gather too.
  const Algorithm gather = algorithm == Algorithm::OneShot ? Algorithm::Composite : algorithm;
  const std::uint32_t ag_per_link = 2 * all_gather::workers_per_link(gather_params(part, topology, gather));
  const auto count = std::max<std::size_t>({std::size_t{2} * part.num_links, rs_cores,
                                            std::size_t{ag_per_link} * part.num_links});
  return one_core_ranges(worker_cores(topology, part.first_worker, static_cast<std::uint32_t>(count), kOp));
}

// One part (its intermediate buffer its own view, parts_by_shape).
void validate_part(const Params& p, const topo::Topology& topology) try {
  const Flat f = flat_of(p.tensor);
  const Algorithm algorithm = part_algorithm(p, topology);
  require_buffer_holds(p.intermediate_buffer, part_intermediate_spec(p, topology), kOp, "intermediate");
  if (algorithm == Algorithm::ReduceScatterAllGather) {
    reduce_scatter::validate(rs_params(p, f), topology);
  } else if (p.chunk_packets == 0u) {
    throw CclParamsError("all_reduce: chunk_packets must be at least 1");
  }
  if (algorithm == Algorithm::OneShot) one_shot::validate_reach(p, topology);
  // The one-shot's multicast has the composite's all_gather's reach and buffers.
  all_gather::validate(gather_params(p, topology, algorithm == Algorithm::OneShot ? Algorithm::Composite : algorithm),
                       topology);
  // The composite's local sum moves packets of one fabric payload even in legacy mode, whose
  // all_gather, sized by its EDMs, does not check the page against it: build() would refuse it.
  if (algorithm == Algorithm::Composite) local_sum_packet(p);
} catch (const CclParamsError&) {
  rethrow_in_all_reduce_name();
}

// One part's workloads in the order each chip runs them.
std::vector<MeshWorkload> build_part(const Params& p, const topo::Topology& topology) {
  const Algorithm algorithm = part_algorithm(p, topology);
  std::vector<MeshWorkload> workloads;
  if (algorithm == Algorithm::OneShot) {
    workloads.push_back(one_shot::build(p, topology));
  } else if (algorithm == Algorithm::ReduceScatterAllGather) {
    workloads.push_back(reduce_scatter::build(rs_params(p, flat_of(p.tensor)), topology));
    workloads.push_back(all_gather::build(gather_params(p, topology, algorithm), topology));
  } else {
    const MeshWorkload gather = all_gather::build(gather_params(p, topology, algorithm), topology);
    const std::uint32_t n = group_size(p, topology);
    workloads.push_back(gather);
    for (MeshWorkload& reduce : local_sum_workloads(p, topology, gather, n)) workloads.push_back(std::move(reduce));
  }
  return workloads;
}

// Adds a part's workloads to the op's, step by step: the op's k-th workload runs every part's
// k-th program on that part's chips (the parts' chips are disjoint, and each chip runs its own
// part's steps in order; a part with fewer steps runs nothing in the later ones).
void add_part_steps(std::vector<MeshWorkload>& steps, std::vector<MeshWorkload> part) {
  for (std::size_t k = 0; k < part.size(); ++k) {
    if (k == steps.size()) {
      steps.push_back(std::move(part[k]));
      continue;
    }
    for (auto& [chip, program] : part[k].programs) {
      CCLMESH_CHECK(!steps[k].programs.contains(chip), "all_reduce: its parts' groups share no chip");
      steps[k].programs.emplace(chip, std::move(program));
    }
    if (steps[k].name != part[k].name) steps[k].name += "+" + part[k].name;
  }
}

// The expected output of one group of `part` (its chips in rank order; empty: the part's one
// shape as a whole).
std::vector<reference::Bytes> part_reference_outputs(const Params& p, const topo::Topology& topology,
                                                     const std::vector<ChipId>& group,
                                                     const std::vector<reference::Bytes>& inputs_by_rank) {
  const std::uint32_t n = group_size(p, topology);
  if (inputs_by_rank.size() != n) {
    throw CclParamsError(fmt::format("all_reduce reference: {} inputs for a group of {}", inputs_by_rank.size(), n));
  }
  reference::Bytes result;
  const Algorithm algorithm = part_algorithm(p, topology);
  if (algorithm == Algorithm::Composite || algorithm == Algorithm::OneShot) {
    std::vector<std::span<const std::byte>> parts(inputs_by_rank.begin(), inputs_by_rank.end());
    result = reference::sum_in_order(parts, p.tensor.dtype);
  } else {
    const Flat f = flat_of(p.tensor);
    const std::vector<reference::Bytes> slices =
        group.empty() ? reduce_scatter::reference_outputs(rs_params(p, f), topology, inputs_by_rank)
                      : reduce_scatter::reference_outputs(rs_params(p, f), topology, group, inputs_by_rank);
    result = reference::concat(slices, with_dim_scaled(f.spec, f.dim, n, false), f.dim);
  }
  return std::vector<reference::Bytes>(n, result);
}

}  // namespace

TensorSpec intermediate_spec(const Params& params, const topo::Topology& topology) try {
  // Every part's tensors have the tensor's pages: the largest in bytes holds the others' first.
  std::optional<TensorSpec> largest;
  for (const Params& part : parts_by_shape(params, topology)) {
    const TensorSpec spec = part_intermediate_spec(part, topology);
    if (!largest || size_bytes(spec) > size_bytes(*largest)) largest = spec;
  }
  return *largest;
} catch (const CclParamsError&) {
  rethrow_in_all_reduce_name();
}

bool needs_rs_intermediate(const Params& params, const topo::Topology& topology) try {
  const std::vector<Params> parts = parts_by_shape(params, topology);
  return std::any_of(parts.begin(), parts.end(),
                     [&](const Params& part) { return part_needs_rs_intermediate(part, topology); });
} catch (const CclParamsError&) {
  rethrow_in_all_reduce_name();
}

TensorSpec rs_intermediate_spec(const Params& params, const topo::Topology& topology) try {
  return reduce_scatter::intermediate_spec(rs_params(params, flat_of(params.tensor)), topology);
} catch (const CclParamsError&) {
  rethrow_in_all_reduce_name();
}

std::vector<CoreRange> semaphore_cores(const Params& params, const topo::Topology& topology) try {
  return most_semaphore_cores(parts_by_shape(params, topology),
                              [&](const Params& part) { return part_semaphore_cores(part, topology); });
} catch (const CclParamsError&) {
  rethrow_in_all_reduce_name();
}

void validate(const Params& p, const topo::Topology& topology) {
  require_fabric_rows_move(p);
  require_buffer_holds(p.input_buffer, p.tensor, kOp, "input");
  require_buffer_holds(p.output_buffer, p.tensor, kOp, "output");
  require_buffer_holds(p.intermediate_buffer, intermediate_spec(p, topology), kOp, "intermediate");
  const std::vector<Params> parts = parts_by_shape(p, topology);
  // An algorithm asked runs on every part: say which parts cannot, each with its reason.
  // Each distinct reason once, after the parts it refuses.
  std::vector<std::pair<std::string, std::vector<std::string>>> reasons;
  std::exception_ptr first_refusal;
  for (const Params& part : parts) {
    try {
      validate_part(part, topology);
    } catch (const CclParamsError& e) {
      if (parts.size() == 1) throw;
      if (!first_refusal) first_refusal = std::current_exception();
      std::vector<std::string> groups;
      for (const std::vector<ChipId>& g : part.groups.chips) groups.push_back(fmt::format("{}", fmt::join(g, "-")));
      std::string who = fmt::format("its groups that run as {}s ({})", to_string(part.topology), fmt::join(groups, ", "));
      std::string reason = refusal_after_all_reduce_name(e.what());
      const auto same = std::find_if(reasons.begin(), reasons.end(), [&](const auto& r) { return r.first == reason; });
      if (same == reasons.end()) {
        reasons.push_back({std::move(reason), {std::move(who)}});
      } else {
        same->second.push_back(std::move(who));
      }
    }
  }
  if (!first_refusal) return;
  std::vector<std::string> refusals;
  for (const auto& [reason, parts_refused] : reasons) {
    refusals.push_back(fmt::format("{}: {}", fmt::join(parts_refused, " and "), reason));
  }
  try {
    std::rethrow_exception(first_refusal);
  } catch (const CclParamsError&) {
    // validate_part's refusals are already in all_reduce's name: said once, the first one's type kept.
    rethrow_reworded(fmt::format("all_reduce: {}", fmt::join(refusals, "; ")));
  }
}

std::vector<MeshWorkload> build(const Params& p, const topo::Topology& topology) try {
  validate(p, topology);
  std::vector<MeshWorkload> workloads;
  for (const Params& part : parts_by_shape(p, topology)) {
    add_part_steps(workloads, build_part(part, topology));
  }
  // Each of them holds all of the all_reduce's buffers and global semaphores: freeing one waits
  // for the whole op.
  const std::vector<BufferHandle> buffers =
      workload_buffers({&p.input_buffer, &p.output_buffer, &p.intermediate_buffer,
                        p.rs_intermediate_buffer ? &*p.rs_intermediate_buffer : nullptr});
  const std::vector<GlobalSemaphore> semaphores = workload_semaphores({&p.barrier_semaphore, &p.done_semaphore});
  for (MeshWorkload& w : workloads) {
    w.name = fmt::format("{}:{}", kOp, w.name);
    w.buffers = buffers;
    w.global_semaphores = semaphores;
  }
  return workloads;
} catch (const CclParamsError&) {
  rethrow_in_all_reduce_name();
}

void run(MeshDevice& device, const Params& params) {
  device.enqueue_workloads(build(params, device.topology()));  // all or none
  device.finish();
}

std::vector<reference::Bytes> reference_outputs(const Params& p, const topo::Topology& topology,
                                                const std::vector<reference::Bytes>& inputs_by_rank) {
  return reference_outputs(p, topology, {}, inputs_by_rank);
}

std::vector<reference::Bytes> reference_outputs(const Params& p, const topo::Topology& topology,
                                                const std::vector<ChipId>& group,
                                                const std::vector<reference::Bytes>& inputs_by_rank) {
  validate(p, topology);
  const std::vector<Params> parts = parts_by_shape(p, topology);
  if (group.empty() || parts.size() == 1) return part_reference_outputs(parts.front(), topology, group, inputs_by_rank);
  for (const Params& part : parts) {
    const auto& chips = part.groups.chips;  // a part of several: its groups in rank order
    if (std::find(chips.begin(), chips.end(), group) != chips.end()) return part_reference_outputs(part, topology, group, inputs_by_rank);
  }
  throw CclParamsError(fmt::format("all_reduce reference: group {} is none of the op's groups", fmt::join(group, ",")));
}

}  // namespace cclmesh::runtime::ccl::all_reduce
