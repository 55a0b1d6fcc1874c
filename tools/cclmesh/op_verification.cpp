#include "tools/cclmesh/op_verification.hpp"

#include <algorithm>
#include <random>
#include <set>
#include <utility>

#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/remote/remote_mesh_device.hpp"
#include "sim/engine/check.hpp"
#include "tools/cclmesh/run_groups.hpp"
#include "tools/cclmesh/run_tensors.hpp"

namespace cclmesh::cli::detail {

Bytes seeded_bytes(std::uint64_t seed, std::uint64_t salt, std::uint64_t bytes) {
  std::mt19937_64 generator(seed * 0x9E3779B97F4A7C15ull + salt);
  Bytes data(bytes);
  for (std::uint64_t i = 0; i < bytes; i += 8) {
    const std::uint64_t word = generator();
    for (std::uint64_t b = 0; b < 8 && i + b < bytes; ++b) data[i + b] = static_cast<std::byte>(word >> (8 * b));
  }
  return data;
}

Bytes seeded_finite(std::uint64_t seed, std::uint64_t salt, std::uint64_t bytes) {
  Bytes data = seeded_bytes(seed, salt, bytes);
  for (std::uint64_t i = 1; i < bytes; i += 2) {
    data[i] = static_cast<std::byte>(0x38 + (static_cast<unsigned>(data[i]) & 0x0F));
  }
  return data;
}

namespace {

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

// check_outputs' check, a type of its own so that reference_bytes finds it in a std::function
// (target<>): PreparedOp carries only the function, and every op's preparation makes one.
struct ExpectedOutputsCheck {
  runtime::MeshDevice* device;
  std::vector<OutputBuffer> outputs;
  ExpectedOutputs expected;
  std::uint64_t page_bytes;
  std::uint32_t element;
  ReferenceBytes bytes;

  Check operator()() const {
    return compare_all(*device, outputs, expected, static_cast<std::uint32_t>(page_bytes), element);
  }
};

ReferenceBytes count_reference_bytes(const ExpectedOutputs& expected) {
  ReferenceBytes bytes;
  std::set<const Bytes*> counted;  // a tensor chips share is held once
  for (const auto& [chip, per_buffer] : expected) {
    for (const SharedBytes& tensor : per_buffer) {
      bytes.read_back = std::max<std::uint64_t>(bytes.read_back, tensor->size());
      if (counted.insert(tensor.get()).second) bytes.held += tensor->size();
    }
  }
  return bytes;
}

}  // namespace

ReferenceBytes reference_bytes(const std::function<Check()>& check) {
  const auto* expected = check.target<ExpectedOutputsCheck>();
  return expected == nullptr ? ReferenceBytes{} : expected->bytes;
}

ReferenceBytes expected_reference_bytes(CollectiveOp op, const std::vector<std::vector<ChipId>>& groups,
                                        std::uint64_t input_bytes, std::uint64_t output_bytes) {
  std::uint64_t chips = 0;
  for (const std::vector<ChipId>& group : groups) chips += group.size();
  const std::uint64_t n_groups = groups.size();
  switch (op) {
    // The source's input, shared by its receivers (prepare_pair_op).
    case CollectiveOp::SendRecv:
    case CollectiveOp::Broadcast: return {n_groups * input_bytes, input_bytes};
    // One gathered tensor a group shares; reduce's root's alone.
    case CollectiveOp::AllGather:
    case CollectiveOp::Reduce: return {n_groups * output_bytes, output_bytes};
    // Every rank's input, one tensor per output buffer, which a group's chips share.
    case CollectiveOp::AllBroadcast: return {chips * output_bytes, output_bytes};
    // A tensor of each chip's own.
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllToAll:
    case CollectiveOp::AllReduce: return {chips * output_bytes, output_bytes};
  }
  CCLMESH_CHECK(false, "expected_reference_bytes: an op without a count");
  return {};
}

std::function<Check()> check_outputs(runtime::MeshDevice& device, std::vector<OutputBuffer> outputs,
                                     ExpectedOutputs expected, std::uint64_t page_bytes, std::uint32_t element) {
  // A served device's result that its server would not send back (one read past its bound on
  // host bytes) is refused now, before the op runs, not once it has.
  if (const auto* served = dynamic_cast<const runtime::remote::RemoteMeshDevice*>(&device)) {
    for (const auto& [chip, per_buffer] : expected) {
      for (const SharedBytes& tensor : per_buffer) served->require_within_host_limit("read_buffer", tensor->size());
    }
  }
  const ReferenceBytes bytes = count_reference_bytes(expected);
  return ExpectedOutputsCheck{&device, std::move(outputs), std::move(expected), page_bytes, element, bytes};
}

std::vector<OutputBuffer> single_output(const BufferHandle& buffer) { return {OutputBuffer{"output", buffer}}; }

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

SharedBytes share(Bytes bytes) { return std::make_shared<const Bytes>(std::move(bytes)); }

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

}  // namespace cclmesh::cli::detail
