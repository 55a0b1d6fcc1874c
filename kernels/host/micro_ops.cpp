#include "kernels/host/micro_ops.hpp"

#include <fmt/format.h>

#include "kernels/host/command_encoder.hpp"

namespace cclmesh::cmd {
namespace {

using api::AddressOperand;
using api::CommandCode;

Address to_address(const SemaphoreRef& sem) {
  if (const auto* id = std::get_if<SemaphoreId>(&sem)) {
    return *id;
  }
  return AbsoluteAddress{std::get<GlobalSemaphoreAddress>(sem).address};
}

ChipDestination to_chip_destination(const FabricDestination& dest) {
  return std::visit([](const auto& d) -> ChipDestination { return d; }, dest);
}

std::string shape_text(const api::Shape4D& s) { return fmt::format("({},{},{},{})", s.w, s.z, s.y, s.x); }

FullTensorSliceArg checked_slice(const char* micro_op, const api::TensorSlice& slice) {
  const api::CclCommandTensor tensor = api::to_command_tensor(slice);
  if (api::volume(slice.worker_slice_shape) > 0xFFFFFFFFull) {
    throw EncodeError(micro_op, "worker_slice_shape", shape_text(slice.worker_slice_shape),
                      "fewer than 2^32 pages");
  }
  const api::SliceCheck check = api::check_command_tensor(tensor);
  if (check != api::SliceCheck::OK) {
    throw EncodeError(micro_op, "tensor slice",
                      fmt::format("{} (tensor={} slice={} offset={} worker_offset={} worker_pages={})",
                                  api::slice_check_name(check), shape_text(tensor.tensor_shape),
                                  shape_text(tensor.tensor_slice_shape), shape_text(tensor.tensor_slice_offset),
                                  shape_text(tensor.worker_start_offset_in_slice), tensor.worker_pages_per_slice),
                      "a worker run inside a slice inside its tensor");
  }
  return FullTensorSliceArg{tensor};
}

AddressInfoArg src(Address a) { return AddressInfoArg{AddressOperand::SOURCE, a}; }
AddressInfoArg dst(Address a) { return AddressInfoArg{AddressOperand::DESTINATION, a}; }

Command semaphore_inc(const SemaphoreRef& sem, uint32_t value, CoreDescriptor core, ChipDestination dest) {
  return Command{CommandCode::ATOMIC_INC, dest,
                 {dst(to_address(sem)), CoreDescriptorArg{core}, AtomicIncValueArg{value}}};
}

}  // namespace

Command read_tensor_slice_to_cb(const api::TensorSlice& slice, uint32_t cb_id) {
  return Command{CommandCode::STREAM_TENSOR_TO_CB, LocalOnly{},
                 {dst(CircularBufferId{cb_id}), CoreDescriptorArg{AddrGenCore{}},
                  checked_slice("read_tensor_slice_to_cb", slice)}};
}

Command read_tensor_slice_to_cb_for_eventual_fabric_write(const api::TensorSlice& slice, uint32_t cb_id) {
  return Command{CommandCode::STREAM_TENSOR_TO_CB, ChipUnicast{0, true},
                 {dst(CircularBufferId{cb_id}), CoreDescriptorArg{AddrGenCore{}},
                  checked_slice("read_tensor_slice_to_cb_for_eventual_fabric_write", slice)}};
}

Command local_write_cb_to_tensor_slice(const api::TensorSlice& slice, uint32_t cb_id) {
  return Command{CommandCode::STREAM_CB_TO_TENSOR, LocalOnly{},
                 {src(CircularBufferId{cb_id}), CoreDescriptorArg{AddrGenCore{}},
                  checked_slice("local_write_cb_to_tensor_slice", slice)}};
}

Command fabric_write_cb_to_tensor_slice(const api::TensorSlice& slice, uint32_t cb_id, const FabricDestination& dest) {
  return Command{CommandCode::STREAM_CB_TO_TENSOR, to_chip_destination(dest),
                 {src(CircularBufferId{cb_id}), CoreDescriptorArg{AddrGenCore{}},
                  checked_slice("fabric_write_cb_to_tensor_slice", slice)}};
}

Command local_semaphore_wait(const SemaphoreRef& sem, uint32_t min_value) {
  return Command{CommandCode::WAIT_VALUE, LocalOnly{},
                 {src(to_address(sem)), CoreDescriptorArg{LocalCore{}}, TargetValueArg{min_value}}};
}

Command local_core_semaphore_inc(const SemaphoreRef& sem, uint32_t value) {
  return semaphore_inc(sem, value, LocalCore{}, LocalOnly{});
}

Command local_core_semaphore_set(const SemaphoreRef& sem, uint32_t value) {
  return Command{CommandCode::SET_SEMAPHORE_VALUE, LocalOnly{},
                 {dst(to_address(sem)), CoreDescriptorArg{LocalCore{}}, TargetValueArg{value}}};
}

Command local_chip_noc_semaphore_inc(uint32_t noc0_x, uint32_t noc0_y, const SemaphoreRef& sem, uint32_t value) {
  return semaphore_inc(sem, value, NocXyCore{noc0_x, noc0_y}, LocalOnly{});
}

Command local_chip_semaphore_inc_mcast(const SemaphoreRef& sem, uint32_t value, const NocRectangle& rect) {
  return semaphore_inc(sem, value, rect, LocalOnly{});
}

Command fabric_unicast_semaphore_inc(const SemaphoreRef& sem, uint32_t value, uint32_t noc0_x, uint32_t noc0_y,
                                     const ChipUnicast& dest) {
  return semaphore_inc(sem, value, NocXyCore{noc0_x, noc0_y}, dest);
}

Command fabric_multicast_semaphore_inc(const SemaphoreRef& sem, uint32_t value, uint32_t noc0_x, uint32_t noc0_y,
                                       const ChipMulticast& dest) {
  return semaphore_inc(sem, value, NocXyCore{noc0_x, noc0_y}, dest);
}

Command fabric_unicast_semaphore_inc_mcast(const SemaphoreRef& sem, uint32_t value, const NocRectangle& rect,
                                           const ChipUnicast& dest) {
  return semaphore_inc(sem, value, rect, dest);
}

Command local_chip_noc_absolute_address_semaphore_inc(uint32_t noc0_x, uint32_t noc0_y, uint32_t address,
                                                      uint32_t value) {
  return semaphore_inc(GlobalSemaphoreAddress{address}, value, NocXyCore{noc0_x, noc0_y}, LocalOnly{});
}

Command fabric_unicast_absolute_address_semaphore_inc(uint32_t address, uint32_t value, uint32_t noc0_x,
                                                      uint32_t noc0_y, const ChipUnicast& dest) {
  return semaphore_inc(GlobalSemaphoreAddress{address}, value, NocXyCore{noc0_x, noc0_y}, dest);
}

Command inline_write(uint32_t address, uint32_t value, uint32_t noc0_x, uint32_t noc0_y, const ChipDestination& dest) {
  return Command{CommandCode::RAW_INLINE_WRITE_BYTES, dest,
                 {dst(AbsoluteAddress{address}), CoreDescriptorArg{NocXyCore{noc0_x, noc0_y}}, TargetValueArg{value}}};
}

Command noc_read_burst_to_cb(const NocTransferBurstArg& burst, uint32_t cb_id) {
  return Command{CommandCode::NOC_READ_BURST, LocalOnly{}, {dst(CircularBufferId{cb_id}), burst}};
}

Command noc_write_burst_from_cb(const NocTransferBurstArg& burst, uint32_t cb_id, const ChipDestination& dest) {
  return Command{CommandCode::NOC_WRITE_BURST, dest, {src(CircularBufferId{cb_id}), burst}};
}

Command flow_controlled_noc_read_burst_to_cb(const NocTransferBurstArg& burst, uint32_t cb_id,
                                             const SemaphoreRef& sem, uint32_t min_value) {
  return Command{CommandCode::FLOW_CONTROLLED_NOC_READ_BURST, LocalOnly{},
                 {src(to_address(sem)), dst(CircularBufferId{cb_id}), burst, TargetValueArg{min_value}}};
}

Command noc_write_burst_and_semaphore_inc(const NocTransferBurstArg& burst, uint32_t cb_id, const SemaphoreRef& sem,
                                          uint32_t value, uint32_t noc0_x, uint32_t noc0_y,
                                          const ChipDestination& dest) {
  return Command{CommandCode::NOC_WRITE_AND_ATOMIC_INC, dest,
                 {src(CircularBufferId{cb_id}), dst(to_address(sem)), CoreDescriptorArg{NocXyCore{noc0_x, noc0_y}},
                  burst, AtomicIncValueArg{value}}};
}

}  // namespace cclmesh::cmd
