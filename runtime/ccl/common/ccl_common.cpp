#include "runtime/ccl/common/ccl_common.hpp"

#include <fmt/format.h>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/device/core_map.hpp"

namespace cclmesh::runtime::ccl {

PageExceedsPacketError::PageExceedsPacketError(std::uint32_t page_size_bytes, std::uint32_t max_payload_bytes)
    : CclParamsError(fmt::format("page size {} B does not fit a fabric packet of {} B", page_size_bytes,
                                 max_payload_bytes)),
      page_size_bytes_(page_size_bytes) {}

KernelSpec interpreter_kernel(CoreCoord core, const kargs::InterpreterSpec& spec, DataMovementProcessor processor,
                              NocIndex noc) {
  const kargs::KernelArgs args = kargs::build_interpreter_args(spec);
  KernelSpec kernel;
  kernel.kernel = kernels::kCclInterpreterKernelName;
  kernel.core_kind = CoreKind::Tensix;
  kernel.cores = {CoreRange{core, core}};
  kernel.processor = processor;
  kernel.noc = noc;
  kernel.compile_time_args = args.compile_time;
  kernel.runtime_args[core] = args.runtime;
  return kernel;
}

void add_copy_kernels(Program& program, CoreCoord core, const kargs::InterpreterSpec& writer_base,
                      const kargs::InterpreterStreamSpec& reader, const kargs::InterpreterStreamSpec& writer,
                      bool split) {
  if (!split) {
    kargs::InterpreterSpec both = writer_base;
    both.streams = {reader, writer};
    program.kernels.push_back(interpreter_kernel(core, both));
    return;
  }
  kargs::InterpreterSpec read;
  read.packet_header_cb_id = writer_base.packet_header_cb_id;
  read.packet_size_in_pages = writer_base.packet_size_in_pages;
  read.streams = {reader};
  program.kernels.push_back(interpreter_kernel(core, read, DataMovementProcessor::Riscv1, NocIndex::Noc1));
  kargs::InterpreterSpec write = writer_base;
  write.streams = {writer};
  program.kernels.push_back(interpreter_kernel(core, write));
}

void add_slice_copy_kernels(Program& program, CoreCoord core, kargs::InterpreterSpec spec,
                            const kargs::TensorArgs& input, const api::TensorSlice& run,
                            const kargs::InterpreterStreamSpec& writer, bool split, bool has_data) {
  if (has_data) {
    const kargs::InterpreterStreamSpec reader{input, cmd::encode_command(cmd::read_tensor_slice_to_cb(run, kDataCbId)),
                                              1};
    add_copy_kernels(program, core, spec, reader, writer, split);
    return;
  }
  spec.streams = {writer};
  program.kernels.push_back(interpreter_kernel(core, spec));
}

CircularBufferSpec packet_header_cb(CoreCoord core) {
  return CircularBufferSpec{kPacketHeaderCbId, {CoreRange{core, core}}, kernels::interpreter::kInterpreterPacketHeaderSlots,
                            api::kPacketHeaderSizeBytes};
}

CircularBufferSpec data_cb(CoreCoord core, std::uint32_t page_size_bytes, std::uint32_t pages) {
  return CircularBufferSpec{kDataCbId, {CoreRange{core, core}}, pages, page_size_bytes};
}

SemaphoreSpec tensix_semaphore(CoreCoord core, std::uint32_t id) {
  return SemaphoreSpec{id, CoreKind::Tensix, {CoreRange{core, core}}, 0};
}

void connect_to_fabric(Program& program, kargs::InterpreterSpec& spec, const FabricPlan& plan, const FabricPort& port,
                       ChipId chip, CoreCoord core, bool forward, bool backward) {
  if (forward) {
    const std::uint32_t* s = kForwardConnectionSemaphoreIds;
    spec.forward_connection = plan.worker_connection(port, chip, true, s[0], s[1], s[2]);
    for (int i = 0; i < 3; ++i) program.semaphores.push_back(tensix_semaphore(core, s[i]));
  }
  if (backward) {
    const std::uint32_t* s = kBackwardConnectionSemaphoreIds;
    spec.backward_connection = plan.worker_connection(port, chip, false, s[0], s[1], s[2]);
    for (int i = 0; i < 3; ++i) program.semaphores.push_back(tensix_semaphore(core, s[i]));
  }
}

std::uint32_t packet_size_in_pages(std::uint32_t requested, std::uint32_t page_size_bytes,
                                   std::uint32_t max_payload_bytes) {
  if (page_size_bytes == 0 || page_size_bytes > max_payload_bytes) {
    throw PageExceedsPacketError(page_size_bytes, max_payload_bytes);
  }
  if (requested != 0) return requested;
  return max_payload_bytes / page_size_bytes;
}

api::TensorSlice whole_buffer_slice(const BufferHandle& buffer) {
  const auto pages = static_cast<std::uint32_t>(buffer.config.size_bytes / buffer.config.page_size_bytes);
  const api::Shape4D shape{1, 1, 1, pages};
  return api::TensorSlice{shape, shape, api::Shape4D{0, 0, 0, 0}, shape, api::Shape4D{0, 0, 0, 0}};
}

void require_same_shape(const BufferHandle& input, const BufferHandle& output, const std::string& op) {
  if (input.config.page_size_bytes == 0 || input.config.size_bytes % input.config.page_size_bytes != 0) {
    throw CclParamsError(fmt::format("{}: input buffer of {} B is not whole pages of {} B", op, input.config.size_bytes,
                                     input.config.page_size_bytes));
  }
  if (input.config.size_bytes != output.config.size_bytes || input.config.page_size_bytes != output.config.page_size_bytes) {
    throw CclParamsError(fmt::format("{}: input is {} B in pages of {} B but output is {} B in pages of {} B; expected "
                                     "the same",
                                     op, input.config.size_bytes, input.config.page_size_bytes, output.config.size_bytes,
                                     output.config.page_size_bytes));
  }
}

void require_worker_core(const topo::Topology& topology, CoreCoord core, const std::string& op) {
  const CoreCoord grid = common_worker_grid(topology);
  if (core.x >= grid.x || core.y >= grid.y) {
    throw CclParamsError(fmt::format("{}: worker core ({},{}) is outside the {}x{} worker grid{}", op, core.x, core.y,
                                     grid.x, grid.y, worker_grid_harvest_note(topology)));
  }
}

void run_workload(MeshDevice& device, const MeshWorkload& workload) {
  device.enqueue_workload(workload);
  device.finish();
}

}  // namespace cclmesh::runtime::ccl
