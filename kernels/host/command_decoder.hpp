#pragma once
// Host decoder: runtime-args words -> Command values. It walks the stream with the device's
// own reader (api::CommandStreamReader), so the host accepts exactly what the interpreter
// accepts, and it never reads past the end of the stream. Any malformed input raises a
// DecodeError with the command index, the word offset and what was wrong.

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/api/command_stream_reader.hpp"
#include "kernels/host/command.hpp"

namespace cclmesh::cmd {

class DecodeError : public std::runtime_error {
 public:
  DecodeError(api::DecodeStatus status, std::size_t command_index, std::size_t word_offset, std::string detail);

  api::DecodeStatus status() const { return status_; }
  std::size_t command_index() const { return command_index_; }
  // Offset of the word that is wrong (the header word, an argument header, or the stream end).
  std::size_t word_offset() const { return word_offset_; }
  const std::string& detail() const { return detail_; }

 private:
  api::DecodeStatus status_;
  std::size_t command_index_;
  std::size_t word_offset_;
  std::string detail_;
};

struct DecodedCommand {
  std::size_t index = 0;        // position in the stream, from 0
  std::size_t word_offset = 0;  // of the header word
  std::size_t word_count = 0;   // header + arguments + payloads
  Command command;
};

class CommandDecoder {
 public:
  explicit CommandDecoder(std::span<const uint32_t> stream);

  bool at_end() const { return reader_.at_end(); }
  std::size_t position() const { return reader_.position(); }
  std::size_t next_index() const { return reader_.command_index(); }

  // Decodes the next command; throws DecodeError (and stays failed) on malformed input.
  DecodedCommand next();

 private:
  [[noreturn]] void fail(api::DecodeStatus status) const;
  CommandArg decode_arg(const api::ArgView& view) const;

  std::span<const uint32_t> stream_;
  api::CommandStreamReader reader_;
};

// Every command until the end of the stream.
std::vector<DecodedCommand> decode_stream(std::span<const uint32_t> stream);
// The first `num_commands` commands (the runtime args' command count); words after them are
// not looked at.
std::vector<DecodedCommand> decode_stream(std::span<const uint32_t> stream, std::size_t num_commands);

}  // namespace cclmesh::cmd
