#include "kernels/host/disassembler.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/host/command_decoder.hpp"

namespace cclmesh::cmd {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// Words shown after a malformed command, enough to recognise it without flooding a log line.
constexpr std::size_t kMaxRawWordsShown = 8;

std::string shape(const api::Shape4D& s) { return fmt::format("({},{},{},{})", s.w, s.z, s.y, s.x); }

std::string address_text(const Address& a) {
  return std::visit(Overloaded{
                        [](const SemaphoreId& s) { return fmt::format("SEM({})", s.id); },
                        [](const CircularBufferId& c) { return fmt::format("CB({})", c.id); },
                        [](const AbsoluteAddress& x) { return fmt::format("ABS(0x{:x})", x.address); },
                        [](const RelativeAddress& x) { return fmt::format("REL(0x{:x})", x.offset); },
                        [](const NoAddress&) { return std::string("NONE"); },
                    },
                    a);
}

std::string core_text(const CoreDescriptor& c) {
  return std::visit(Overloaded{
                        [](const AddrGenCore&) { return std::string("ADDRGEN"); },
                        [](const LocalCore&) { return std::string("LOCAL"); },
                        [](const NocXyCore& xy) { return fmt::format("XY({},{})", xy.x, xy.y); },
                        [](const NocRectangle& r) {
                          return fmt::format("RECT(({},{})..({},{}))", r.start_x, r.start_y, r.end_x, r.end_y);
                        },
                        [](const NoCore&) { return std::string("NONE"); },
                    },
                    c);
}

std::string raw_words(std::span<const uint32_t> stream, std::size_t from) {
  std::string text;
  const std::size_t end = std::min(stream.size(), from + kMaxRawWordsShown);
  for (std::size_t i = from; i < end; ++i) {
    text += fmt::format(" 0x{:08x}", stream[i]);
  }
  if (end < stream.size()) {
    text += " ...";
  }
  return text.empty() ? " (none)" : text;
}

std::string malformed_line(std::span<const uint32_t> stream, std::size_t index, const DecodeError& e,
                           std::size_t command_offset) {
  return fmt::format("#{} <malformed at word {}: {}: {}{}> words:{}", index, e.word_offset(),
                     api::decode_status_name(e.status()), api::decode_status_description(e.status()),
                     e.detail().empty() ? std::string() : " (" + e.detail() + ")", raw_words(stream, command_offset));
}

}  // namespace

std::string format_destination(const ChipDestination& destination) {
  return std::visit(Overloaded{
                        [](const LocalOnly&) { return std::string("dest=LOCAL"); },
                        [](const ChipUnicast& u) {
                          return fmt::format("dest=UNICAST hops={} {}", u.distance_in_hops, u.forward ? "fwd" : "bwd");
                        },
                        [](const ChipMulticast& m) {
                          return fmt::format("dest=MCAST fwd={} bwd={}", m.num_targets_forward, m.num_targets_backward);
                        },
                    },
                    destination);
}

std::string format_arg(const CommandArg& arg) {
  return std::visit(
      Overloaded{
          [](const TensorShapeArg& a) { return "shape=" + shape(a.shape); },
          [](const TensorSliceShapeArg& a) { return "slice=" + shape(a.shape); },
          [](const TensorSliceOffsetArg& a) { return "off=" + shape(a.offset); },
          [](const WorkerStartOffsetArg& a) { return "worker_off=" + shape(a.offset); },
          [](const WorkerPagesPerSliceArg& a) { return fmt::format("pages={}", a.pages); },
          [](const FullTensorSliceArg& a) {
            const api::CclCommandTensor& t = a.tensor;
            return fmt::format("slice{{shape={} slice={} off={} worker_off={} pages={}}}", shape(t.tensor_shape),
                               shape(t.tensor_slice_shape), shape(t.tensor_slice_offset),
                               shape(t.worker_start_offset_in_slice), t.worker_pages_per_slice);
          },
          [](const TargetValueArg& a) { return fmt::format("value={}", a.value); },
          [](const AtomicIncValueArg& a) { return fmt::format("inc={}", a.value); },
          [](const AddressInfoArg& a) {
            return fmt::format("{}={}", a.operand == api::AddressOperand::SOURCE ? "src" : "dst",
                               address_text(a.address));
          },
          [](const CoreDescriptorArg& a) { return "core=" + core_text(a.core); },
          [](const NocTransferBurstArg& a) {
            std::string groups;
            for (const auto& group : a.groups) {
              groups += groups.empty() ? "[" : " [";
              for (std::size_t i = 0; i < group.size(); ++i) {
                const NocTransfer& t = group[i];
                groups += fmt::format("{}+0x{:x}@XY({},{}):{}B", i == 0 ? "" : " ", t.bank_address_offset, t.noc_x,
                                      t.noc_y, t.size_bytes);
              }
              groups += "]";
            }
            return fmt::format("burst{{base=0x{:x} groups={}}}", a.bank_base_address, groups.empty() ? "none" : groups);
          },
          [](const BurstPacketSizeArg& a) { return fmt::format("per_packet={}", a.transfers_per_packet); },
      },
      arg);
}

std::string format_command(const Command& command) {
  std::string text = fmt::format("{} {}", api::command_code_name(command.code), format_destination(command.destination));
  for (const CommandArg& arg : command.args) {
    text += ' ';
    text += format_arg(arg);
  }
  return text;
}

std::string disassemble(std::span<const uint32_t> stream) {
  std::string text;
  CommandDecoder decoder(stream);
  while (!decoder.at_end()) {
    const std::size_t index = decoder.next_index();
    const std::size_t offset = decoder.position();
    try {
      const DecodedCommand c = decoder.next();
      text += fmt::format("#{} {}\n", c.index, format_command(c.command));
    } catch (const DecodeError& e) {
      text += malformed_line(stream, index, e, offset) + "\n";
      break;
    }
  }
  return text;
}

std::string disassemble_one(std::span<const uint32_t> stream, std::size_t index) {
  CommandDecoder decoder(stream);
  while (!decoder.at_end()) {
    const std::size_t current = decoder.next_index();
    const std::size_t offset = decoder.position();
    try {
      const DecodedCommand c = decoder.next();
      if (c.index == index) {
        return fmt::format("#{} {}", c.index, format_command(c.command));
      }
    } catch (const DecodeError& e) {
      if (current == index) {
        return malformed_line(stream, index, e, offset);
      }
      return fmt::format("#{} <unreachable: command #{} before it is malformed: {}>", index, current,
                         api::decode_status_name(e.status()));
    }
  }
  return fmt::format("#{} <past the end of the stream: {} commands in {} words>", index, decoder.next_index(),
                     stream.size());
}

}  // namespace cclmesh::cmd
