#pragma once
// Host-side value form of one CCL command: what the encoder consumes, what the decoder yields
// and what the disassembler prints. One struct per argument code, so a command is its opcode,
// its chip destination and the list of arguments exactly as they appear on the wire; encode
// and decode are inverse on it (decode(encode(c)) == c).

#include <cstdint>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "kernels/api/ccl_command.hpp"

namespace cclmesh::cmd {

// --- Chip destination (header word, REFERENCE §4.3) ------------------------------------------
struct LocalOnly {
  bool operator==(const LocalOnly&) const = default;
};
struct ChipUnicast {
  uint32_t distance_in_hops = 0;
  bool forward = true;
  bool operator==(const ChipUnicast&) const = default;
};
struct ChipMulticast {
  uint32_t num_targets_forward = 0;
  uint32_t num_targets_backward = 0;
  bool operator==(const ChipMulticast&) const = default;
};
using ChipDestination = std::variant<LocalOnly, ChipUnicast, ChipMulticast>;

// --- Addresses (SET_ADDRESS_INFO) ------------------------------------------------------------
struct SemaphoreId {
  uint32_t id = 0;
  bool operator==(const SemaphoreId&) const = default;
};
struct CircularBufferId {
  uint32_t id = 0;
  bool operator==(const CircularBufferId&) const = default;
};
struct AbsoluteAddress {
  uint32_t address = 0;
  bool operator==(const AbsoluteAddress&) const = default;
};
struct RelativeAddress {
  uint32_t offset = 0;
  bool operator==(const RelativeAddress&) const = default;
};
struct NoAddress {
  bool operator==(const NoAddress&) const = default;
};
// Alternative order = api::AddressType values.
using Address = std::variant<SemaphoreId, CircularBufferId, AbsoluteAddress, RelativeAddress, NoAddress>;

// --- Core descriptors (SET_CORE_DESCRIPTOR_INFO), NoC0 coordinates --------------------------
struct AddrGenCore {
  bool operator==(const AddrGenCore&) const = default;
};
struct LocalCore {
  bool operator==(const LocalCore&) const = default;
};
struct NocXyCore {
  uint32_t x = 0;
  uint32_t y = 0;
  bool operator==(const NocXyCore&) const = default;
};
struct NocRectangle {
  uint32_t start_x = 0;
  uint32_t start_y = 0;
  uint32_t end_x = 0;
  uint32_t end_y = 0;
  bool operator==(const NocRectangle&) const = default;
};
struct NoCore {
  bool operator==(const NoCore&) const = default;
};
// Alternative order = api::CoreDescriptorType values.
using CoreDescriptor = std::variant<AddrGenCore, LocalCore, NocXyCore, NocRectangle, NoCore>;

// --- Bursts -----------------------------------------------------------------------------------
struct NocTransfer {
  uint32_t bank_address_offset = 0;
  uint32_t noc_x = 0;
  uint32_t noc_y = 0;
  uint32_t size_bytes = 0;
  bool operator==(const NocTransfer&) const = default;
};
// Transfers grouped per packet; the total across groups is 8-bit on the wire.
using NocTransferGroups = std::vector<std::vector<NocTransfer>>;

// --- Arguments: one struct per argument code, in code order (the variant index IS the code) --
struct TensorShapeArg {
  static constexpr api::CommandArgCode kCode = api::CommandArgCode::SET_TENSOR_SHAPE_IN_PAGES;
  api::Shape4D shape{};
  bool operator==(const TensorShapeArg&) const = default;
};
struct TensorSliceShapeArg {
  static constexpr api::CommandArgCode kCode = api::CommandArgCode::SET_TENSOR_SLICE_SHAPE_IN_PAGES;
  api::Shape4D shape{};
  bool operator==(const TensorSliceShapeArg&) const = default;
};
struct TensorSliceOffsetArg {
  static constexpr api::CommandArgCode kCode = api::CommandArgCode::SET_TENSOR_SLICE_OFFSET_IN_PAGES;
  api::Shape4D offset{};
  bool operator==(const TensorSliceOffsetArg&) const = default;
};
struct WorkerStartOffsetArg {
  static constexpr api::CommandArgCode kCode = api::CommandArgCode::SET_WORKER_START_OFFSET_IN_SLICE_IN_PAGES;
  api::Shape4D offset{};
  bool operator==(const WorkerStartOffsetArg&) const = default;
};
struct WorkerPagesPerSliceArg {
  static constexpr api::CommandArgCode kCode = api::CommandArgCode::SET_WORKER_PAGES_PER_SLICE;
  uint32_t pages = 0;
  bool operator==(const WorkerPagesPerSliceArg&) const = default;
};
struct FullTensorSliceArg {
  static constexpr api::CommandArgCode kCode = api::CommandArgCode::SET_FULL_TENSOR_SLICE_SPEC_IN_PAGES;
  api::CclCommandTensor tensor{};
  bool operator==(const FullTensorSliceArg&) const = default;
};
// Wait target (WAIT_VALUE, FLOW_CONTROLLED_NOC_READ_BURST), value written
// (RAW_INLINE_WRITE_BYTES) or value set (SET_SEMAPHORE_VALUE). Inline: at most 255.
struct TargetValueArg {
  static constexpr api::CommandArgCode kCode = api::CommandArgCode::SET_TARGET_VALUE;
  uint32_t value = 0;
  bool operator==(const TargetValueArg&) const = default;
};
// Increment (wrap is always UINT32_MAX in the inline form). Inline: at most 255.
struct AtomicIncValueArg {
  static constexpr api::CommandArgCode kCode = api::CommandArgCode::SET_ATOMIC_INC_VALUE;
  uint32_t value = 0;
  bool operator==(const AtomicIncValueArg&) const = default;
};
struct AddressInfoArg {
  static constexpr api::CommandArgCode kCode = api::CommandArgCode::SET_ADDRESS_INFO;
  api::AddressOperand operand = api::AddressOperand::SOURCE;
  Address address = NoAddress{};
  bool operator==(const AddressInfoArg&) const = default;
};
struct CoreDescriptorArg {
  static constexpr api::CommandArgCode kCode = api::CommandArgCode::SET_CORE_DESCRIPTOR_INFO;
  CoreDescriptor core = NoCore{};
  bool operator==(const CoreDescriptorArg&) const = default;
};
struct NocTransferBurstArg {
  static constexpr api::CommandArgCode kCode = api::CommandArgCode::SET_NOC_TRANSFER_BURST_START_INFO;
  uint32_t bank_base_address = 0;
  NocTransferGroups groups;
  bool operator==(const NocTransferBurstArg&) const = default;
};
struct BurstPacketSizeArg {
  static constexpr api::CommandArgCode kCode = api::CommandArgCode::SET_NOC_TRANSFER_BURST_SIZE_PER_PACKET;
  uint32_t transfers_per_packet = 1;
  bool operator==(const BurstPacketSizeArg&) const = default;
};

using CommandArg =
    std::variant<TensorShapeArg, TensorSliceShapeArg, TensorSliceOffsetArg, WorkerStartOffsetArg,
                 WorkerPagesPerSliceArg, FullTensorSliceArg, TargetValueArg, AtomicIncValueArg, AddressInfoArg,
                 CoreDescriptorArg, NocTransferBurstArg, BurstPacketSizeArg>;

static_assert(std::variant_size_v<CommandArg> == api::kNumCommandArgCodes,
              "one CommandArg alternative per argument code in CCLMESH_CCL_ARG_CODES");

namespace detail {
template <std::size_t... I>
constexpr bool args_in_code_order(std::index_sequence<I...>) {
  return ((static_cast<std::size_t>(std::variant_alternative_t<I, CommandArg>::kCode) == I) && ...);
}
}  // namespace detail
static_assert(detail::args_in_code_order(std::make_index_sequence<std::variant_size_v<CommandArg>>{}),
              "CommandArg alternative i must be argument code i");

inline api::CommandArgCode arg_code(const CommandArg& arg) {
  return std::visit([](const auto& a) { return std::decay_t<decltype(a)>::kCode; }, arg);
}

struct Command {
  api::CommandCode code = api::CommandCode::ILLEGAL;
  ChipDestination destination = LocalOnly{};
  std::vector<CommandArg> args;

  bool operator==(const Command&) const = default;

  // The first argument of type T, or nullptr.
  template <class T>
  const T* find_arg() const {
    for (const auto& a : args) {
      if (const T* p = std::get_if<T>(&a)) {
        return p;
      }
    }
    return nullptr;
  }
  const Address* find_address(api::AddressOperand operand) const {
    for (const auto& a : args) {
      if (const auto* p = std::get_if<AddressInfoArg>(&a); p != nullptr && p->operand == operand) {
        return &p->address;
      }
    }
    return nullptr;
  }
};

}  // namespace cclmesh::cmd
