#include "kernels/host/command_decoder.hpp"

#include <fmt/format.h>

#include <limits>
#include <utility>

namespace cclmesh::cmd {
namespace {

using api::CommandArgCode;
using api::DecodeStatus;

uint32_t checked_size(std::span<const uint32_t> stream) {
  if (stream.size() > std::numeric_limits<uint32_t>::max()) {
    throw std::length_error(fmt::format("command stream of {} words exceeds 2^32 - 1", stream.size()));
  }
  return static_cast<uint32_t>(stream.size());
}

std::string opcode_text(uint32_t header_word) {
  const uint32_t code = api::header_code_bits(header_word);
  if (api::is_known_command_code(code)) {
    return api::command_code_name(static_cast<api::CommandCode>(code));
  }
  return fmt::format("opcode {}", code);
}

std::string mask_names(uint32_t mask) {
  std::string names;
  for (uint32_t c = 0; c < api::kNumCommandArgCodes; ++c) {
    if ((mask & (1u << c)) != 0) {
      names += names.empty() ? "" : ", ";
      names += api::arg_code_name(static_cast<CommandArgCode>(c));
    }
  }
  return names;
}

}  // namespace

DecodeError::DecodeError(DecodeStatus status, std::size_t command_index, std::size_t word_offset, std::string detail)
    : std::runtime_error(fmt::format("malformed command stream: command #{} at word {}: {}: {}{}", command_index,
                                     word_offset, api::decode_status_name(status),
                                     api::decode_status_description(status),
                                     detail.empty() ? std::string() : " (" + detail + ")")),
      status_(status),
      command_index_(command_index),
      word_offset_(word_offset),
      detail_(std::move(detail)) {}

CommandDecoder::CommandDecoder(std::span<const uint32_t> stream)
    : stream_(stream), reader_(stream.data(), checked_size(stream)) {}

// Builds the detail text from the words around the failure; every index is bounds-checked
// because the failure may be exactly that a word is missing.
void CommandDecoder::fail(DecodeStatus status) const {
  const std::size_t header_at = reader_.command_offset();
  const std::size_t at = reader_.position();
  const bool have_header = header_at < stream_.size();
  const uint32_t header = have_header ? stream_[header_at] : 0;
  const auto opcode_info = [&] {
    return api::command_info(static_cast<api::CommandCode>(api::header_code_bits(header)));
  };
  std::string detail;
  std::size_t offset = at;
  if (!have_header) {
    detail = fmt::format("stream ends after {} words", stream_.size());
  } else if (at == header_at) {  // the header word itself is wrong
    if (status == DecodeStatus::ARG_COUNT_MISMATCH) {
      detail = fmt::format("{} has {} arguments, the opcode table allows {}..{}", opcode_text(header),
                           api::header_arg_count(header), opcode_info().min_args, opcode_info().max_args);
    } else {
      detail = fmt::format("{}, header word 0x{:08x}", opcode_text(header), header);
    }
  } else if (status == DecodeStatus::MISSING_REQUIRED_ARG) {
    detail = fmt::format("{} requires {}", opcode_text(header), mask_names(opcode_info().required_args));
    offset = header_at;
  } else if (status == DecodeStatus::INCOMPLETE_TENSOR_SLICE) {
    detail = fmt::format("{} needs every slice field set by it or an earlier command of the stream",
                         opcode_text(header));
    offset = header_at;
  } else if (at < stream_.size()) {  // an argument is wrong
    const api::CommandArgHeader arg = api::decode_arg_header(stream_[at]);
    const std::string arg_name = api::is_known_arg_code(arg.code)
                                     ? api::arg_code_name(static_cast<CommandArgCode>(arg.code))
                                     : fmt::format("argument code {}", arg.code);
    detail = fmt::format("{} argument {} (word 0x{:08x})", opcode_text(header), arg_name, stream_[at]);
    if (status == DecodeStatus::ARG_NOT_ALLOWED) {
      detail += fmt::format("; accepted: {}", mask_names(opcode_info().allowed_args));
    }
  } else {
    detail = fmt::format("{} declares {} arguments, stream ends after {} words", opcode_text(header),
                         api::header_arg_count(header), stream_.size());
  }
  throw DecodeError(status, reader_.command_index(), offset, std::move(detail));
}

CommandArg CommandDecoder::decode_arg(const api::ArgView& view) const {
  const uint32_t* p = stream_.data() + view.payload_offset;
  const api::CommandArgHeader& h = view.header;
  switch (view.code()) {
    case CommandArgCode::SET_TENSOR_SHAPE_IN_PAGES:
      return TensorShapeArg{api::read_shape4d(p)};
    case CommandArgCode::SET_TENSOR_SLICE_SHAPE_IN_PAGES:
      return TensorSliceShapeArg{api::read_shape4d(p)};
    case CommandArgCode::SET_TENSOR_SLICE_OFFSET_IN_PAGES:
      return TensorSliceOffsetArg{api::read_shape4d(p)};
    case CommandArgCode::SET_WORKER_START_OFFSET_IN_SLICE_IN_PAGES:
      return WorkerStartOffsetArg{api::read_shape4d(p)};
    case CommandArgCode::SET_WORKER_PAGES_PER_SLICE:
      return WorkerPagesPerSliceArg{p[0]};
    case CommandArgCode::SET_FULL_TENSOR_SLICE_SPEC_IN_PAGES:
      return FullTensorSliceArg{api::read_command_tensor(p)};
    case CommandArgCode::SET_TARGET_VALUE:
      return TargetValueArg{h.inline1};
    case CommandArgCode::SET_ATOMIC_INC_VALUE:
      return AtomicIncValueArg{h.inline1};
    case CommandArgCode::SET_ADDRESS_INFO: {
      const auto operand = static_cast<api::AddressOperand>(h.inline0);
      switch (static_cast<api::AddressType>(h.inline1)) {
        case api::AddressType::SEMAPHORE_ID:
          return AddressInfoArg{operand, SemaphoreId{h.inline2}};
        case api::AddressType::CIRCULAR_BUFFER_ID:
          return AddressInfoArg{operand, CircularBufferId{h.inline2}};
        case api::AddressType::ABSOLUTE_ADDRESS:
          return AddressInfoArg{operand, AbsoluteAddress{p[0]}};
        case api::AddressType::RELATIVE_ADDRESS:
          return AddressInfoArg{operand, RelativeAddress{p[0]}};
        case api::AddressType::NONE:
          return AddressInfoArg{operand, NoAddress{}};
      }
      break;
    }
    case CommandArgCode::SET_CORE_DESCRIPTOR_INFO:
      switch (static_cast<api::CoreDescriptorType>(h.inline0)) {
        case api::CoreDescriptorType::ADDRGEN:
          return CoreDescriptorArg{AddrGenCore{}};
        case api::CoreDescriptorType::LOCAL:
          return CoreDescriptorArg{LocalCore{}};
        case api::CoreDescriptorType::NOC_XY:
          return CoreDescriptorArg{NocXyCore{h.inline1, h.inline2}};
        case api::CoreDescriptorType::RECTANGLE: {
          const api::NocRectangleCoords r = api::unpack_noc_rectangle(p[0]);
          return CoreDescriptorArg{NocRectangle{r.start_x, r.start_y, r.end_x, r.end_y}};
        }
        case api::CoreDescriptorType::NONE:
          return CoreDescriptorArg{NoCore{}};
      }
      break;
    case CommandArgCode::SET_NOC_TRANSFER_BURST_START_INFO: {
      // Structure already validated by the reader's measure_arg_payload.
      NocTransferBurstArg burst{p[0], {}};
      std::size_t pos = 1;
      while (pos < view.payload_words) {
        const uint32_t in_group = p[pos++];
        auto& group = burst.groups.emplace_back();
        for (uint32_t t = 0; t < in_group; ++t, pos += api::kNocTransferRecordWords) {
          group.push_back(NocTransfer{p[pos], api::noc_yx_x(p[pos + 1]), api::noc_yx_y(p[pos + 1]), p[pos + 2]});
        }
      }
      return burst;
    }
    case CommandArgCode::SET_NOC_TRANSFER_BURST_SIZE_PER_PACKET:
      return BurstPacketSizeArg{h.inline0};
    case CommandArgCode::INVALID:
      break;
  }
  throw std::logic_error(fmt::format("cclmesh decoder bug: validated argument code {} not handled", h.code));
}

DecodedCommand CommandDecoder::next() {
  api::CommandHeader header{};
  if (const DecodeStatus s = reader_.begin_command(header); s != DecodeStatus::OK) {
    fail(s);
  }
  DecodedCommand out;
  out.index = reader_.command_index();
  out.word_offset = reader_.command_offset();
  out.command.code = header.code;
  switch (header.dest_type) {
    case api::DestinationType::CHIP_UNICAST:
      out.command.destination = ChipUnicast{header.distance_in_hops, header.is_forward_direction != 0};
      break;
    case api::DestinationType::CHIP_MULTICAST:
      out.command.destination = ChipMulticast{header.num_targets_forward, header.num_targets_backward};
      break;
    case api::DestinationType::CHIP_LOCAL_ONLY:
      out.command.destination = LocalOnly{};
      break;
  }
  out.command.args.reserve(header.arg_count);
  for (uint32_t i = 0; i < header.arg_count; ++i) {
    api::ArgView view{};
    if (const DecodeStatus s = reader_.next_arg(view); s != DecodeStatus::OK) {
      fail(s);
    }
    out.command.args.push_back(decode_arg(view));
  }
  if (const DecodeStatus s = reader_.end_command(); s != DecodeStatus::OK) {
    fail(s);
  }
  out.word_count = reader_.position() - out.word_offset;
  return out;
}

std::vector<DecodedCommand> decode_stream(std::span<const uint32_t> stream) {
  CommandDecoder decoder(stream);
  std::vector<DecodedCommand> out;
  while (!decoder.at_end()) {
    out.push_back(decoder.next());
  }
  return out;
}

std::vector<DecodedCommand> decode_stream(std::span<const uint32_t> stream, std::size_t num_commands) {
  CommandDecoder decoder(stream);
  std::vector<DecodedCommand> out;
  out.reserve(num_commands);
  for (std::size_t i = 0; i < num_commands; ++i) {
    out.push_back(decoder.next());  // a stream shorter than its count fails as TRUNCATED
  }
  return out;
}

}  // namespace cclmesh::cmd
