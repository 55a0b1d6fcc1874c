#pragma once
// Disassembler: a command stream as readable text, one command per line, for tools and for
// error messages ("... in command #3 STREAM_CB_TO_TENSOR dest=UNICAST hops=2 fwd ...").
//
//   #3 STREAM_CB_TO_TENSOR dest=UNICAST hops=2 fwd src=CB(0) core=ADDRGEN
//      slice{shape=(1,1,1,8) slice=(1,1,1,1) off=(0,0,0,3) worker_off=(0,0,0,0) pages=1}
//   (one line; wrapped here)
//
// Arguments print in stream order. None of these functions throws on a malformed stream: the
// text says where and why decoding stopped.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "kernels/host/command.hpp"

namespace cclmesh::cmd {

// "STREAM_CB_TO_TENSOR dest=... <args>" (no index, no newline).
std::string format_command(const Command& command);
std::string format_arg(const CommandArg& arg);
std::string format_destination(const ChipDestination& destination);

// Every command, "#i ..." one per line (each line ends in '\n'). A malformed stream ends with a
// line "#k <malformed: STATUS: description (detail)> words: 0x........ ..." after the commands
// that did decode.
std::string disassemble(std::span<const uint32_t> stream);

// Command `index` only, without the trailing newline: "#index ...", or, if it (or a command
// before it) cannot be decoded, "#index <malformed ...>" / "#index <unreachable ...>" /
// "#index <past the end ...>".
std::string disassemble_one(std::span<const uint32_t> stream, std::size_t index);

}  // namespace cclmesh::cmd
