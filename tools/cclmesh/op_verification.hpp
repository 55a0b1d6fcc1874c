#pragma once
// How a run checks its op: seeded inputs written to each chip, and each chip's output buffers
// read back and compared with the host reference of its group.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/ccl/common/collective.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/device/types.hpp"
#include "tools/cclmesh/output_check.hpp"
#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli::detail {

namespace ccl = runtime::ccl;
using runtime::BufferHandle;
using runtime::ChipId;
using Bytes = std::vector<std::byte>;
// Expected outputs are shared between chips that expect the same bytes (all_gather, broadcast),
// so the host keeps one copy of a reference, not one per chip.
using SharedBytes = std::shared_ptr<const Bytes>;

using Check = OutputCheck;

// Seeded input bytes: std::mt19937_64's output is fixed by the standard, so every machine
// generates the same tensors for the same seed.
Bytes seeded_bytes(std::uint64_t seed, std::uint64_t salt, std::uint64_t bytes);

// Seeded bf16 / fp32 values whose high byte keeps them finite and small (2^-15 .. 2^1), so sums
// never overflow and every chip's reduction is comparable bit for bit.
Bytes seeded_finite(std::uint64_t seed, std::uint64_t salt, std::uint64_t bytes);

// An output buffer of an op and its name in mismatch reports and checksums. Most ops have one
// ("output"); all_broadcast has one per rank ("output 0" .. "output N-1").
struct OutputBuffer {
  std::string name;
  BufferHandle handle;
};

// What each chip's output buffers must hold, one entry per OutputBuffer of the op, in order. A
// chip that is not in the map has no defined output (reduce's non-root chips) and is not read.
using ExpectedOutputs = std::map<ChipId, std::vector<SharedBytes>>;

// A check of `expected` against `outputs`, run when the op has finished.
std::function<Check()> check_outputs(runtime::MeshDevice& device, std::vector<OutputBuffer> outputs,
                                     ExpectedOutputs expected, std::uint64_t page_bytes, std::uint32_t element);

// The host bytes a check made by check_outputs holds (its distinct expected tensors) and reads
// back at once (its largest), so that a run with data can count them before the op runs
// (host_memory_check.hpp); 0 and 0 for an empty check or one made otherwise.
struct ReferenceBytes {
  std::uint64_t held = 0;
  std::uint64_t read_back = 0;
};
ReferenceBytes reference_bytes(const std::function<Check()>& check);
// The same, counted before any input is made, from the op's groups and each chip's input and
// output (a buffer of `output_bytes` per output; all_broadcast's N of them): what a served
// device's client will hold, counted before it sends anything (op_runner.cpp). A test holds it
// equal to reference_bytes of the check each op's preparation makes.
ReferenceBytes expected_reference_bytes(CollectiveOp op, const std::vector<std::vector<ChipId>>& groups,
                                        std::uint64_t input_bytes, std::uint64_t output_bytes);

// The op's one output buffer, named "output".
std::vector<OutputBuffer> single_output(const BufferHandle& buffer);

// The chips of every group and each chip's seeded input; inputs in rank order per group.
struct GroupInputs {
  std::vector<std::vector<ChipId>> groups;
  std::map<ChipId, Bytes> inputs;
};

// The run's groups on `device`, each chip's input (`finite`: values whose sums stay finite)
// written to `input` there; no inputs with --no-data.
GroupInputs write_group_inputs(const RunOptions& options, runtime::MeshDevice& device, const ccl::GroupSelection& selection,
                               const BufferHandle& input, bool finite);

// The check of a collective's outputs: the host reference of each group (inputs in rank order)
// against every output buffer of every chip. The reference gives, per rank, what each of the
// op's output buffers holds (an empty list: that rank's outputs are undefined and not read).
// Empty with --no-data (no inputs were made).
using RankOutputs = std::vector<std::vector<SharedBytes>>;  // [rank][output buffer]
using GroupReference =
    std::function<RankOutputs(const std::vector<ChipId>& group, const std::vector<Bytes>& inputs_by_rank)>;

// `bytes` as a reference that chips expecting the same bytes share.
SharedBytes share(Bytes bytes);

// One output buffer per rank, each rank its own tensor.
RankOutputs one_output_each(std::vector<Bytes> outputs);

// That check, of `outputs` against `reference` run on each group's inputs `in`.
std::function<Check()> verifier(runtime::MeshDevice& device, std::vector<OutputBuffer> outputs,
                                const GroupInputs& in, std::uint64_t page_bytes, std::uint32_t element,
                                const GroupReference& reference);

}  // namespace cclmesh::cli::detail
