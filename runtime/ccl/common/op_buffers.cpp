#include "runtime/ccl/common/op_buffers.hpp"

#include <fmt/format.h>

#include "runtime/ccl/common/ccl_common.hpp"

namespace cclmesh::runtime::ccl {

void require_input_output_buffers(const BufferHandle& input, const TensorSpec& input_spec, const BufferHandle& output,
                                  const TensorSpec& output_spec, const std::string& op) {
  require_buffer_holds(input, input_spec, op, "input");
  require_buffer_holds(output, output_spec, op, "output");
  if (input.id == output.id) {
    throw CclParamsError(fmt::format("{}: input and output are the same buffer; expected two buffers", op));
  }
}

void require_fabric_input_output_buffers(const topo::Topology& topology, const std::vector<ChipId>& chips,
                                         const BufferHandle& input, const TensorSpec& input_spec,
                                         const BufferHandle& output, const TensorSpec& output_spec,
                                         const std::string& op) {
  require_input_output_buffers(input, input_spec, output, output_spec, op);
  require_uniform_core_maps(topology, chips, op);
  require_buffer_layouts(topology, chips, {&input, &output});
}

}  // namespace cclmesh::runtime::ccl
