#include "kernels/host/command_encoder.hpp"

#include <fmt/format.h>

#include <type_traits>
#include <utility>

#include "kernels/api/command_stream_reader.hpp"

namespace cclmesh::cmd {
namespace {

using api::AddressType;
using api::CommandArgCode;
using api::CommandCode;
using api::CoreDescriptorType;

static_assert(std::is_same_v<std::variant_alternative_t<static_cast<std::size_t>(AddressType::SEMAPHORE_ID), Address>,
                             SemaphoreId>);
static_assert(std::is_same_v<
              std::variant_alternative_t<static_cast<std::size_t>(AddressType::CIRCULAR_BUFFER_ID), Address>,
              CircularBufferId>);
static_assert(std::is_same_v<
              std::variant_alternative_t<static_cast<std::size_t>(AddressType::ABSOLUTE_ADDRESS), Address>,
              AbsoluteAddress>);
static_assert(std::is_same_v<
              std::variant_alternative_t<static_cast<std::size_t>(AddressType::RELATIVE_ADDRESS), Address>,
              RelativeAddress>);
static_assert(std::is_same_v<std::variant_alternative_t<static_cast<std::size_t>(AddressType::NONE), Address>,
                             NoAddress>);
static_assert(std::is_same_v<
              std::variant_alternative_t<static_cast<std::size_t>(CoreDescriptorType::ADDRGEN), CoreDescriptor>,
              AddrGenCore>);
static_assert(std::is_same_v<
              std::variant_alternative_t<static_cast<std::size_t>(CoreDescriptorType::LOCAL), CoreDescriptor>,
              LocalCore>);
static_assert(std::is_same_v<
              std::variant_alternative_t<static_cast<std::size_t>(CoreDescriptorType::NOC_XY), CoreDescriptor>,
              NocXyCore>);
static_assert(std::is_same_v<
              std::variant_alternative_t<static_cast<std::size_t>(CoreDescriptorType::RECTANGLE), CoreDescriptor>,
              NocRectangle>);
static_assert(std::is_same_v<
              std::variant_alternative_t<static_cast<std::size_t>(CoreDescriptorType::NONE), CoreDescriptor>,
              NoCore>);

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// Encodes one command into `out`, validating as it goes.
class CommandWriter {
 public:
  CommandWriter(const Command& command, std::vector<uint32_t>& out, uint8_t& slice_fields)
      : command_(command), out_(out), slice_fields_(slice_fields) {}

  void write() {
    check_opcode();
    const api::CommandInfo info = api::command_info(command_.code);
    api::CommandHeader header = make_header();
    const std::size_t argc = command_.args.size();
    if (argc > api::kMaxArgsPerCommand || argc < info.min_args || argc > info.max_args) {
      fail("argument count", std::to_string(argc),
           fmt::format("{}..{} arguments (the opcode table's range; the header field holds at most {})",
                       info.min_args, info.max_args, api::kMaxArgsPerCommand));
    }
    header.arg_count = static_cast<uint8_t>(argc);
    out_.push_back(api::encode_command_header(header));
    check_invariant(api::decode_command_header(out_.back(), header) == api::DecodeStatus::OK,
                    "header word rejected by the device reader");

    uint32_t seen = 0;
    uint32_t operands_seen = 0;
    uint8_t slice_fields = slice_fields_;
    for (const CommandArg& arg : command_.args) {
      const CommandArgCode code = arg_code(arg);
      const uint32_t bit = api::arg_bit(code);
      if ((info.allowed_args & bit) == 0) {
        fail("argument", api::arg_code_name(code), "an argument code this opcode accepts (see CCLMESH_CCL_COMMAND_CODES)");
      }
      if (const auto* address = std::get_if<AddressInfoArg>(&arg)) {
        if (static_cast<uint32_t>(address->operand) >= api::kNumAddressOperands) {
          fail("address operand", std::to_string(static_cast<uint32_t>(address->operand)), "SOURCE or DESTINATION");
        }
        const uint32_t operand_bit = 1u << static_cast<uint32_t>(address->operand);
        if ((operands_seen & operand_bit) != 0) {
          fail("argument", operand_name(address->operand) + std::string(" address"), "at most once per command");
        }
        operands_seen |= operand_bit;
      } else if ((seen & bit) != 0) {
        fail("argument", api::arg_code_name(code), "at most once per command");
      }
      seen |= bit;
      slice_fields |= api::slice_fields_set_by(code);
      write_arg(arg);
    }
    if ((seen & info.required_args) != info.required_args) {
      fail("arguments", "missing", fmt::format("the required arguments{}", required_names(info.required_args & ~seen)));
    }
    if (api::is_streaming_command(command_.code) && slice_fields != api::kSliceFieldsAll) {
      fail("tensor slice", "incomplete",
           "a full slice (SET_FULL_TENSOR_SLICE_SPEC_IN_PAGES), or every slice field set by this or an earlier "
           "command of the stream");
    }
    slice_fields_ = slice_fields;
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& value, const std::string& expected) const {
    throw EncodeError(api::command_code_name(command_.code), field, value, expected);
  }

  void check_invariant(bool ok, const char* what) const {
    if (!ok) {
      throw std::logic_error(fmt::format("cclmesh encoder bug while encoding {}: {}",
                                         api::command_code_name(command_.code), what));
    }
  }

  static std::string operand_name(api::AddressOperand operand) {
    return operand == api::AddressOperand::SOURCE ? "source" : "destination";
  }

  static std::string required_names(uint32_t mask) {
    std::string names;
    for (uint32_t c = 0; c < api::kNumCommandArgCodes; ++c) {
      if ((mask & (1u << c)) != 0) {
        names += " ";
        names += api::arg_code_name(static_cast<CommandArgCode>(c));
      }
    }
    return names;
  }

  void check_opcode() const {
    const auto raw = static_cast<uint32_t>(command_.code);
    if (command_.code == CommandCode::ILLEGAL || !api::is_known_command_code(raw)) {
      throw EncodeError(command_.code == CommandCode::ILLEGAL ? "ILLEGAL" : "UNKNOWN_OPCODE", "opcode",
                        std::to_string(raw), fmt::format("an opcode in 1..{}", api::kNumCommandCodes - 1));
    }
  }

  void check_range(const std::string& field, uint64_t value, uint64_t max, const char* why) const {
    if (value > max) {
      fail(field, std::to_string(value), fmt::format("<= {} ({})", max, why));
    }
  }

  void check_byte(const std::string& field, uint64_t value) const {
    check_range(field, value, api::kMaxInlineValue, "inline fields are 8 bits");
  }

  api::CommandHeader make_header() const {
    api::CommandHeader h{command_.code, api::DestinationType::CHIP_LOCAL_ONLY, 0, 0, 0, 0, 0};
    std::visit(Overloaded{
                   [&](const LocalOnly&) {},
                   [&](const ChipUnicast& u) {
                     check_range("distance_in_hops", u.distance_in_hops, api::kMaxFabricHops,
                                 "the fabric routing byte has 4-bit hop fields");
                     h.dest_type = api::DestinationType::CHIP_UNICAST;
                     h.distance_in_hops = static_cast<uint8_t>(u.distance_in_hops);
                     h.is_forward_direction = u.forward ? 1 : 0;
                   },
                   [&](const ChipMulticast& m) {
                     check_range("num_targets_forward", m.num_targets_forward, api::kMaxFabricHops,
                                 "the fabric routing byte has 4-bit range fields");
                     check_range("num_targets_backward", m.num_targets_backward, api::kMaxFabricHops,
                                 "the fabric routing byte has 4-bit range fields");
                     h.dest_type = api::DestinationType::CHIP_MULTICAST;
                     h.num_targets_forward = static_cast<uint8_t>(m.num_targets_forward);
                     h.num_targets_backward = static_cast<uint8_t>(m.num_targets_backward);
                   },
               },
               command_.destination);
    return h;
  }

  void push_arg_header(CommandArgCode code, uint32_t inline0 = 0, uint32_t inline1 = 0, uint32_t inline2 = 0) {
    const uint32_t word = api::encode_arg_header(code, static_cast<uint8_t>(inline0), static_cast<uint8_t>(inline1),
                                                 static_cast<uint8_t>(inline2));
    check_invariant(api::validate_arg_header(api::decode_arg_header(word)) == api::DecodeStatus::OK,
                    "argument header rejected by the device reader");
    out_.push_back(word);
  }

  void push_shape(CommandArgCode code, const api::Shape4D& s) {
    push_arg_header(code);
    uint32_t words[api::kShape4DWords];
    api::write_shape4d(s, words);
    out_.insert(out_.end(), std::begin(words), std::end(words));
  }

  void write_arg(const CommandArg& arg) {
    std::visit(Overloaded{
                   [&](const TensorShapeArg& a) { push_shape(a.kCode, a.shape); },
                   [&](const TensorSliceShapeArg& a) { push_shape(a.kCode, a.shape); },
                   [&](const TensorSliceOffsetArg& a) { push_shape(a.kCode, a.offset); },
                   [&](const WorkerStartOffsetArg& a) { push_shape(a.kCode, a.offset); },
                   [&](const WorkerPagesPerSliceArg& a) {
                     push_arg_header(a.kCode);
                     out_.push_back(a.pages);
                   },
                   [&](const FullTensorSliceArg& a) {
                     push_arg_header(a.kCode);
                     uint32_t words[api::kCclCommandTensorWords];
                     api::write_command_tensor(a.tensor, words);
                     out_.insert(out_.end(), std::begin(words), std::end(words));
                   },
                   [&](const TargetValueArg& a) {
                     check_byte(command_.code == CommandCode::WAIT_VALUE ||
                                        command_.code == CommandCode::FLOW_CONTROLLED_NOC_READ_BURST
                                    ? "wait target (SET_TARGET_VALUE)"
                                    : "inline value (SET_TARGET_VALUE)",
                                a.value);
                     push_arg_header(a.kCode, api::kInlineValueFlag, a.value);
                   },
                   [&](const AtomicIncValueArg& a) {
                     check_byte("atomic increment (SET_ATOMIC_INC_VALUE)", a.value);
                     push_arg_header(a.kCode, api::kInlineValueFlag, a.value);
                   },
                   [&](const AddressInfoArg& a) { write_address(a); },
                   [&](const CoreDescriptorArg& a) { write_core(a); },
                   [&](const NocTransferBurstArg& a) { write_burst(a); },
                   [&](const BurstPacketSizeArg& a) {
                     check_byte("transfers per packet (SET_NOC_TRANSFER_BURST_SIZE_PER_PACKET)", a.transfers_per_packet);
                     if (a.transfers_per_packet == 0) {
                       fail("transfers per packet (SET_NOC_TRANSFER_BURST_SIZE_PER_PACKET)", "0", ">= 1");
                     }
                     push_arg_header(a.kCode, a.transfers_per_packet);
                   },
               },
               arg);
  }

  void write_address(const AddressInfoArg& a) {
    const auto operand = static_cast<uint32_t>(a.operand);
    const auto type = static_cast<uint32_t>(a.address.index());
    const std::string which = operand_name(a.operand);
    std::visit(Overloaded{
                   [&](const SemaphoreId& s) {
                     check_byte(which + " semaphore id", s.id);
                     push_arg_header(CommandArgCode::SET_ADDRESS_INFO, operand, type, s.id);
                   },
                   [&](const CircularBufferId& c) {
                     check_byte(which + " circular buffer id", c.id);
                     push_arg_header(CommandArgCode::SET_ADDRESS_INFO, operand, type, c.id);
                   },
                   [&](const AbsoluteAddress& abs) {
                     push_arg_header(CommandArgCode::SET_ADDRESS_INFO, operand, type);
                     out_.push_back(abs.address);
                   },
                   [&](const RelativeAddress& rel) {
                     push_arg_header(CommandArgCode::SET_ADDRESS_INFO, operand, type);
                     out_.push_back(rel.offset);
                   },
                   [&](const NoAddress&) { push_arg_header(CommandArgCode::SET_ADDRESS_INFO, operand, type); },
               },
               a.address);
  }

  void write_core(const CoreDescriptorArg& a) {
    const auto type = static_cast<uint32_t>(a.core.index());
    std::visit(Overloaded{
                   [&](const NocXyCore& xy) {
                     check_byte("core NoC x", xy.x);
                     check_byte("core NoC y", xy.y);
                     push_arg_header(CommandArgCode::SET_CORE_DESCRIPTOR_INFO, type, xy.x, xy.y);
                   },
                   [&](const NocRectangle& r) {
                     check_byte("rectangle start x", r.start_x);
                     check_byte("rectangle start y", r.start_y);
                     check_byte("rectangle end x", r.end_x);
                     check_byte("rectangle end y", r.end_y);
                     push_arg_header(CommandArgCode::SET_CORE_DESCRIPTOR_INFO, type);
                     out_.push_back(api::pack_noc_rectangle(
                         api::NocRectangleCoords{static_cast<uint8_t>(r.start_x), static_cast<uint8_t>(r.start_y),
                                                 static_cast<uint8_t>(r.end_x), static_cast<uint8_t>(r.end_y)}));
                   },
                   [&](const auto&) { push_arg_header(CommandArgCode::SET_CORE_DESCRIPTOR_INFO, type); },
               },
               a.core);
  }

  void write_burst(const NocTransferBurstArg& a) {
    std::size_t total = 0;
    for (const auto& group : a.groups) {
      if (group.empty()) {
        fail("burst group", "empty", "at least one transfer per group (a group is one packet)");
      }
      total += group.size();
      for (const NocTransfer& t : group) {
        check_byte("burst transfer NoC x", t.noc_x);
        check_byte("burst transfer NoC y", t.noc_y);
      }
    }
    check_byte("burst transfer count (SET_NOC_TRANSFER_BURST_START_INFO)", total);
    push_arg_header(CommandArgCode::SET_NOC_TRANSFER_BURST_START_INFO, static_cast<uint32_t>(total));
    out_.push_back(a.bank_base_address);
    for (const auto& group : a.groups) {
      out_.push_back(static_cast<uint32_t>(group.size()));
      for (const NocTransfer& t : group) {
        out_.push_back(t.bank_address_offset);
        out_.push_back(api::pack_noc_yx(t.noc_x, t.noc_y));
        out_.push_back(t.size_bytes);
      }
    }
  }

  const Command& command_;
  std::vector<uint32_t>& out_;
  uint8_t& slice_fields_;
};

}  // namespace

EncodeError::EncodeError(std::string command, std::string field, std::string value, std::string expected)
    : std::invalid_argument(
          fmt::format("cannot encode {}: {} = {}, expected {}", command, field, value, expected)),
      command_(std::move(command)),
      field_(std::move(field)),
      value_(std::move(value)),
      expected_(std::move(expected)) {}

void CommandStreamEncoder::add(const Command& command) {
  const std::size_t size_before = words_.size();
  try {
    CommandWriter(command, words_, slice_fields_).write();
  } catch (...) {
    words_.resize(size_before);
    throw;
  }
  ++num_commands_;
}

void CommandStreamEncoder::add(std::span<const Command> commands) {
  for (const Command& c : commands) {
    add(c);
  }
}

std::vector<uint32_t> encode_stream(std::span<const Command> commands) {
  CommandStreamEncoder encoder;
  encoder.add(commands);
  return std::move(encoder).take();
}

std::vector<uint32_t> encode_command(const Command& command) {
  CommandStreamEncoder encoder;
  encoder.add(command);
  return std::move(encoder).take();
}

}  // namespace cclmesh::cmd
