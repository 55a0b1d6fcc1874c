#pragma once
// Host encoder: Command values -> the runtime-args words of a command stream.
//
// The encoder accepts exactly what the device-side reader (api::CommandStreamReader) accepts,
// and rejects everything else with an EncodeError naming the command, the field, the value and
// what was expected. In particular it never truncates: an inline value or wait target above
// 255 (REFERENCE §4.11, the 8-bit trap that otherwise turns into a hang), a route longer than
// 15 hops, or more arguments than the opcode table allows are errors.

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/host/command.hpp"

namespace cclmesh::cmd {

class EncodeError : public std::invalid_argument {
 public:
  EncodeError(std::string command, std::string field, std::string value, std::string expected);

  const std::string& command() const { return command_; }
  const std::string& field() const { return field_; }
  const std::string& value() const { return value_; }
  const std::string& expected() const { return expected_; }

 private:
  std::string command_;
  std::string field_;
  std::string value_;
  std::string expected_;
};

// Encodes a stream command by command. Tensor-slice fields are sticky across the commands of a
// stream (as on the device), so a streaming command may carry only the fields that changed;
// the encoder tracks which fields earlier commands set. Strong guarantee: a rejected command
// leaves the stream unchanged.
class CommandStreamEncoder {
 public:
  void add(const Command& command);
  void add(std::span<const Command> commands);

  const std::vector<uint32_t>& words() const { return words_; }
  std::size_t num_commands() const { return num_commands_; }
  std::vector<uint32_t> take() && { return std::move(words_); }

 private:
  std::vector<uint32_t> words_;
  std::size_t num_commands_ = 0;
  uint8_t slice_fields_ = 0;
};

std::vector<uint32_t> encode_stream(std::span<const Command> commands);
// One command as a stream of its own (a streaming command must then carry a full slice).
std::vector<uint32_t> encode_command(const Command& command);

}  // namespace cclmesh::cmd
