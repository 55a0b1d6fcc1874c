#pragma once
// One command-interpreter stream from the commands it runs: encoded (cmd::encode_stream, which
// throws EncodeError for what the device would misread), counted, and paired with the tensor its
// streaming commands move. What every hand-written stream otherwise spells out in three parts
// that must agree (examples/custom_command_stream.cpp).

#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "kernels/host/command.hpp"
#include "kernels/host/command_encoder.hpp"
#include "kernels/host/kernel_args_builder.hpp"

namespace cclmesh::kargs {

// `tensor`: the buffer's address-generator args on the chip the stream's streaming commands read
// or write (runtime::ChipBuffers::interpreter_args); nullopt for a stream of waits, increments
// and writes to fixed addresses only.
inline InterpreterStreamSpec interpreter_stream(std::optional<TensorArgs> tensor,
                                                std::span<const cmd::Command> commands) {
  return InterpreterStreamSpec{std::move(tensor), cmd::encode_stream(commands),
                               static_cast<uint32_t>(commands.size())};
}

}  // namespace cclmesh::kargs
