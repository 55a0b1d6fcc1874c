#pragma once
// Valid sample commands and arguments for every opcode and every argument code. The switches
// have no default: adding a row to CCLMESH_CCL_COMMAND_CODES or CCLMESH_CCL_ARG_CODES breaks
// the build here (-Wswitch, -Werror) until the new code has a sample, and so a round-trip test.

#include <stdexcept>
#include <vector>

#include "kernels/api/ccl_command.hpp"
#include "kernels/host/command.hpp"
#include "kernels/host/micro_ops.hpp"

namespace cclmesh::cmd::testing {

inline api::TensorSlice sample_slice() {
  // tensor (1,2,4,8), slice (1,1,4,2) at (0,1,0,3); worker run of 5 pages starting at page 1.
  return api::TensorSlice{{1, 2, 4, 8}, {1, 1, 4, 2}, {0, 1, 0, 3}, {1, 1, 1, 5}, {0, 0, 0, 1}};
}

inline NocTransferBurstArg sample_burst() {
  return NocTransferBurstArg{0x20000,
                             {{NocTransfer{0x0, 1, 2, 2048}, NocTransfer{0x800, 1, 3, 2048}},
                              {NocTransfer{0x1000, 6, 7, 1024}}}};
}

inline Command sample_command(api::CommandCode code) {
  using api::CommandCode;
  switch (code) {
    case CommandCode::ILLEGAL:
    case CommandCode::COUNT:
      throw std::invalid_argument("no valid sample for ILLEGAL / COUNT");
    case CommandCode::STREAM_TENSOR_TO_CB:
      return read_tensor_slice_to_cb_for_eventual_fabric_write(sample_slice(), 1);
    case CommandCode::STREAM_CB_TO_TENSOR:
      return fabric_write_cb_to_tensor_slice(sample_slice(), 2, ChipMulticast{3, 4});
    case CommandCode::STREAM_EDM_TO_TENSOR: {
      const api::CclCommandTensor t = api::to_command_tensor(sample_slice());
      return Command{CommandCode::STREAM_EDM_TO_TENSOR,
                     ChipUnicast{7, false},
                     {TensorShapeArg{t.tensor_shape}, TensorSliceShapeArg{t.tensor_slice_shape},
                      TensorSliceOffsetArg{t.tensor_slice_offset}, WorkerStartOffsetArg{t.worker_start_offset_in_slice},
                      WorkerPagesPerSliceArg{t.worker_pages_per_slice},
                      AddressInfoArg{api::AddressOperand::SOURCE, CircularBufferId{4}},
                      AddressInfoArg{api::AddressOperand::DESTINATION, RelativeAddress{0x40}},
                      CoreDescriptorArg{AddrGenCore{}}}};
    }
    case CommandCode::WAIT_VALUE:
      return local_semaphore_wait(SemaphoreId{5}, 255);
    case CommandCode::ATOMIC_INC:
      return fabric_unicast_semaphore_inc_mcast(GlobalSemaphoreAddress{0x1230}, 2, NocRectangle{1, 1, 4, 5},
                                                ChipUnicast{15, true});
    case CommandCode::RAW_INLINE_WRITE_BYTES:
      return inline_write(0x4000, 0xAB, 9, 6, ChipUnicast{1, true});
    case CommandCode::NOC_READ_BURST: {
      Command c = noc_read_burst_to_cb(sample_burst(), 3);
      c.args.push_back(BurstPacketSizeArg{2});
      return c;
    }
    case CommandCode::NOC_WRITE_BURST:
      return noc_write_burst_from_cb(sample_burst(), 3, ChipMulticast{15, 15});
    case CommandCode::FLOW_CONTROLLED_NOC_READ_BURST:
      return flow_controlled_noc_read_burst_to_cb(sample_burst(), 3, SemaphoreId{1}, 4);
    case CommandCode::NOC_WRITE_AND_ATOMIC_INC:
      return noc_write_burst_and_semaphore_inc(sample_burst(), 3, SemaphoreId{2}, 1, 2, 3, ChipUnicast{2, false});
    case CommandCode::SET_SEMAPHORE_VALUE:
      return local_core_semaphore_set(SemaphoreId{6}, 0);
  }
  throw std::invalid_argument("unknown opcode");
}

// Several valid instances of each argument code (each address type for both operands, each
// core descriptor type, edge values).
inline std::vector<CommandArg> sample_args(api::CommandArgCode code) {
  using api::AddressOperand;
  using api::CommandArgCode;
  switch (code) {
    case CommandArgCode::SET_TENSOR_SHAPE_IN_PAGES:
      return {TensorShapeArg{{1, 2, 3, 4}}, TensorShapeArg{{0xFFFFFFFF, 1, 1, 1}}};
    case CommandArgCode::SET_TENSOR_SLICE_SHAPE_IN_PAGES:
      return {TensorSliceShapeArg{{1, 1, 3, 2}}};
    case CommandArgCode::SET_TENSOR_SLICE_OFFSET_IN_PAGES:
      return {TensorSliceOffsetArg{{0, 1, 0, 2}}};
    case CommandArgCode::SET_WORKER_START_OFFSET_IN_SLICE_IN_PAGES:
      return {WorkerStartOffsetArg{{0, 0, 0, 3}}};
    case CommandArgCode::SET_WORKER_PAGES_PER_SLICE:
      return {WorkerPagesPerSliceArg{0}, WorkerPagesPerSliceArg{0xFFFFFFFF}};
    case CommandArgCode::SET_FULL_TENSOR_SLICE_SPEC_IN_PAGES:
      return {FullTensorSliceArg{api::to_command_tensor(sample_slice())}};
    case CommandArgCode::SET_TARGET_VALUE:
      return {TargetValueArg{0}, TargetValueArg{1}, TargetValueArg{255}};
    case CommandArgCode::SET_ATOMIC_INC_VALUE:
      return {AtomicIncValueArg{0}, AtomicIncValueArg{1}, AtomicIncValueArg{255}};
    case CommandArgCode::SET_ADDRESS_INFO: {
      std::vector<CommandArg> out;
      for (AddressOperand operand : {AddressOperand::SOURCE, AddressOperand::DESTINATION}) {
        out.push_back(AddressInfoArg{operand, SemaphoreId{255}});
        out.push_back(AddressInfoArg{operand, CircularBufferId{31}});
        out.push_back(AddressInfoArg{operand, AbsoluteAddress{0xFFFFFFFF}});
        out.push_back(AddressInfoArg{operand, RelativeAddress{0x10}});
        out.push_back(AddressInfoArg{operand, NoAddress{}});
      }
      return out;
    }
    case CommandArgCode::SET_CORE_DESCRIPTOR_INFO:
      return {CoreDescriptorArg{AddrGenCore{}}, CoreDescriptorArg{LocalCore{}}, CoreDescriptorArg{NocXyCore{255, 0}},
              CoreDescriptorArg{NocRectangle{1, 2, 255, 254}}, CoreDescriptorArg{NoCore{}}};
    case CommandArgCode::SET_NOC_TRANSFER_BURST_START_INFO:
      return {sample_burst(), NocTransferBurstArg{0x0, {}},
              NocTransferBurstArg{0x100, {std::vector<NocTransfer>(255, NocTransfer{0x20, 255, 255, 32})}}};
    case CommandArgCode::SET_NOC_TRANSFER_BURST_SIZE_PER_PACKET:
      return {BurstPacketSizeArg{1}, BurstPacketSizeArg{255}};
    case CommandArgCode::INVALID:
      break;
  }
  throw std::invalid_argument("no sample for this argument code");
}

// Every sample command in one stream (a realistic mix, used by the fuzz and truncation tests).
inline std::vector<Command> all_sample_commands() {
  std::vector<Command> out;
  for (uint32_t v = 1; v < api::kNumCommandCodes; ++v) {
    out.push_back(sample_command(static_cast<api::CommandCode>(v)));
  }
  return out;
}

}  // namespace cclmesh::cmd::testing
