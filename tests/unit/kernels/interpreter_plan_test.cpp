// The interpreter's per-command planning (kernels/interpreter/command_plan.hpp) and its
// runtime-arg parsing (interpreter_args.hpp + the host builder), with plain inputs.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/api/kernel_fault.hpp"
#include "kernels/host/command_encoder.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/interpreter/command_plan.hpp"
#include "kernels/interpreter/interpreter_args.hpp"

namespace {

using namespace cclmesh;
using api::CommandCode;
using api::KernelFaultCode;
using kernels::CommandContext;
using kernels::CommandPlan;
using kernels::InterpreterEnv;

api::TensorSlice whole_tensor(api::Shape4D shape) { return api::TensorSlice{shape, shape, {0, 0, 0, 0}, shape, {0, 0, 0, 0}}; }

struct Decoded {
  uint32_t fault;
  CommandPlan plan;
  CommandContext ctx;
};

// Reads every command of `words`, returning the last plan (or the first fault).
Decoded read_all(const std::vector<uint32_t>& words, uint32_t num_commands) {
  api::CommandStreamReader r(words.data(), static_cast<uint32_t>(words.size()));
  Decoded d{};
  for (uint32_t i = 0; i < num_commands; ++i) {
    d.fault = kernels::read_command(r, d.ctx, d.plan);
    if (d.fault != 0) {
      break;
    }
  }
  return d;
}

Decoded read_one(const cmd::Command& c) { return read_all(cmd::encode_command(c), 1); }

constexpr InterpreterEnv kFullEnv{true, 0xFF, true, true};

TEST(InterpreterPlan, StreamingCommandCarriesSliceAndCb) {
  const api::TensorSlice slice{{1, 2, 4, 8}, {1, 1, 4, 2}, {0, 1, 0, 3}, {1, 1, 1, 5}, {0, 0, 0, 1}};
  const Decoded d = read_one(cmd::read_tensor_slice_to_cb(slice, 3));
  ASSERT_EQ(d.fault, 0u);
  EXPECT_EQ(d.plan.header.code, CommandCode::STREAM_TENSOR_TO_CB);
  EXPECT_TRUE(kernels::is_operand(d.plan.dst, api::AddressType::CIRCULAR_BUFFER_ID));
  EXPECT_EQ(d.plan.dst.value, 3u);
  EXPECT_EQ(d.ctx.tensor, api::to_command_tensor(slice));
  EXPECT_EQ(kernels::validate_command(d.plan, d.ctx, kFullEnv), 0u);
}

TEST(InterpreterPlan, SliceFieldsStickAcrossCommands) {
  // Second command carries only the slice offset (tt-metal's delta encoding).
  const api::TensorSlice slice = whole_tensor({1, 1, 2, 4});
  const api::CclCommandTensor t = api::to_command_tensor(slice);
  const std::vector<cmd::Command> stream{
      cmd::local_write_cb_to_tensor_slice(slice, 0),
      cmd::Command{CommandCode::STREAM_CB_TO_TENSOR,
                   cmd::LocalOnly{},
                   {cmd::AddressInfoArg{api::AddressOperand::SOURCE, cmd::CircularBufferId{0}},
                    cmd::TensorSliceOffsetArg{{0, 0, 1, 0}}}}};
  const Decoded d = read_all(cmd::encode_stream(stream), 2);
  ASSERT_EQ(d.fault, 0u);
  EXPECT_EQ(d.plan.index, 1u);
  EXPECT_EQ(d.ctx.tensor.tensor_shape, t.tensor_shape);
  EXPECT_EQ(d.ctx.tensor.tensor_slice_offset, (api::Shape4D{0, 0, 1, 0}));
  // Slice (1,1,2,4) at row 1 of a 2-row tensor no longer fits.
  EXPECT_EQ(kernels::validate_command(d.plan, d.ctx, kFullEnv), api::fault_code(api::SliceCheck::SLICE_OUTSIDE_TENSOR));
}

TEST(InterpreterPlan, SemaphoreCommands) {
  Decoded d = read_one(cmd::local_semaphore_wait(cmd::SemaphoreId{2}, 7));
  ASSERT_EQ(d.fault, 0u);
  EXPECT_TRUE(d.plan.has_target);
  EXPECT_EQ(d.plan.target, 7u);
  EXPECT_EQ(d.plan.src.value, 2u);
  EXPECT_EQ(kernels::validate_command(d.plan, d.ctx, kFullEnv), 0u);
  EXPECT_EQ(kernels::validate_command(d.plan, d.ctx, InterpreterEnv{true, 0x3, true, true}),
            api::fault_code(KernelFaultCode::UNKNOWN_SEMAPHORE));

  d = read_one(cmd::fabric_unicast_semaphore_inc(cmd::GlobalSemaphoreAddress{0x1000}, 3, 1, 2, cmd::ChipUnicast{2, false}));
  ASSERT_EQ(d.fault, 0u);
  EXPECT_EQ(d.plan.dst.type, api::AddressType::ABSOLUTE_ADDRESS);
  EXPECT_EQ(d.plan.dst.value, 0x1000u);
  EXPECT_EQ(d.plan.core.type, api::CoreDescriptorType::NOC_XY);
  EXPECT_EQ(d.plan.core.noc_x, 1u);
  EXPECT_EQ(d.plan.core.noc_y, 2u);
  EXPECT_EQ(d.plan.inc, 3u);
  EXPECT_EQ(kernels::validate_command(d.plan, d.ctx, kFullEnv), 0u);
  EXPECT_EQ(kernels::validate_command(d.plan, d.ctx, InterpreterEnv{true, 0xFF, true, false}),
            api::fault_code(KernelFaultCode::NO_FABRIC_CONNECTION));
  EXPECT_EQ(kernels::validate_command(d.plan, d.ctx, InterpreterEnv{true, 0xFF, false, true}), 0u);

  d = read_one(cmd::local_core_semaphore_set(cmd::SemaphoreId{1}, 0));
  ASSERT_EQ(d.fault, 0u);
  EXPECT_EQ(kernels::validate_command(d.plan, d.ctx, kFullEnv), 0u);
}

TEST(InterpreterPlan, RejectsWhatTheInterpreterCannotRun) {
  // NoC multicast atomic inc (REFERENCE §4.8, §11.15).
  Decoded d = read_one(cmd::local_chip_semaphore_inc_mcast(cmd::SemaphoreId{0}, 1, cmd::NocRectangle{1, 1, 2, 2}));
  ASSERT_EQ(d.fault, 0u);
  EXPECT_EQ(kernels::validate_command(d.plan, d.ctx, kFullEnv), api::fault_code(KernelFaultCode::UNSUPPORTED_OPERAND));

  // A 0-hop fabric write.
  d = read_one(cmd::fabric_write_cb_to_tensor_slice(whole_tensor({1, 1, 1, 4}), 0, cmd::ChipUnicast{0, true}));
  ASSERT_EQ(d.fault, 0u);
  EXPECT_EQ(kernels::validate_command(d.plan, d.ctx, kFullEnv), api::fault_code(KernelFaultCode::BAD_ROUTE));

  // Multicast needs both connections when it goes both ways.
  d = read_one(cmd::fabric_write_cb_to_tensor_slice(whole_tensor({1, 1, 1, 4}), 0, cmd::ChipMulticast{1, 2}));
  EXPECT_EQ(kernels::validate_command(d.plan, d.ctx, InterpreterEnv{true, 0, true, false}),
            api::fault_code(KernelFaultCode::NO_FABRIC_CONNECTION));
  EXPECT_EQ(kernels::validate_command(d.plan, d.ctx, InterpreterEnv{false, 0, true, true}),
            api::fault_code(KernelFaultCode::NO_TENSOR));

  // STREAM_EDM_TO_TENSOR decodes but the interpreter does not run it.
  const api::CclCommandTensor t = api::to_command_tensor(whole_tensor({1, 1, 1, 4}));
  d = read_one(cmd::Command{CommandCode::STREAM_EDM_TO_TENSOR, cmd::LocalOnly{}, {cmd::FullTensorSliceArg{t}}});
  ASSERT_EQ(d.fault, 0u);
  EXPECT_EQ(kernels::validate_command(d.plan, d.ctx, kFullEnv), api::fault_code(KernelFaultCode::UNSUPPORTED_COMMAND));
}

TEST(InterpreterPlan, DecodeFaultsCarryTheDecodeStatus) {
  std::vector<uint32_t> words = cmd::encode_command(cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 1));
  words[0] = (words[0] & ~api::kHeaderCodeMask) | 0x3F;  // unknown opcode
  const Decoded d = read_all(words, 1);
  EXPECT_EQ(d.fault, api::fault_code(api::DecodeStatus::UNKNOWN_OPCODE));
  EXPECT_TRUE(api::is_decode_fault(d.fault));
  EXPECT_STREQ(api::kernel_fault_name(d.fault), "UNKNOWN_OPCODE");

  // More commands claimed than the stream holds.
  const Decoded truncated = read_all(cmd::encode_command(cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 1)), 2);
  EXPECT_EQ(truncated.fault, api::fault_code(api::DecodeStatus::TRUNCATED));
}

TEST(InterpreterPlan, BurstGroupsAreWalkable) {
  const cmd::NocTransferBurstArg burst{
      0x20000, {{cmd::NocTransfer{0x0, 1, 2, 2048}, cmd::NocTransfer{0x800, 1, 3, 1024}}, {cmd::NocTransfer{0x1000, 6, 7, 512}}}};
  const std::vector<uint32_t> words = cmd::encode_command(cmd::noc_write_burst_and_semaphore_inc(
      burst, 4, cmd::SemaphoreId{1}, 2, 3, 4, cmd::ChipUnicast{1, true}));
  const Decoded d = read_all(words, 1);
  ASSERT_EQ(d.fault, 0u);
  ASSERT_TRUE(d.plan.burst.present);
  EXPECT_EQ(d.plan.burst.bank_base_address, 0x20000u);
  EXPECT_EQ(d.plan.burst.total_transfers, 3u);
  const uint32_t g0 = d.plan.burst.first_group_word;
  EXPECT_EQ(kernels::burst_group_count(words.data(), g0), 2u);
  EXPECT_EQ(kernels::burst_group_bytes(words.data(), g0), 3072u);
  const api::NocTransferRecord t1 = kernels::burst_transfer(words.data(), g0, 1);
  EXPECT_EQ(t1.bank_address_offset, 0x800u);
  EXPECT_EQ(api::noc_yx_x(t1.noc_yx), 1u);
  EXPECT_EQ(api::noc_yx_y(t1.noc_yx), 3u);
  const uint32_t g1 = g0 + kernels::burst_group_words(words.data(), g0);
  EXPECT_EQ(kernels::burst_group_bytes(words.data(), g1), 512u);
  EXPECT_EQ(kernels::burst_max_group_bytes(words.data(), d.plan.burst), 3072u);
  EXPECT_EQ(kernels::burst_max_transfer_bytes(words.data(), d.plan.burst), 2048u);
  EXPECT_EQ(kernels::validate_command(d.plan, d.ctx, kFullEnv), 0u);
}

// ---- Page runs ----------------------------------------------------------------------------

std::vector<kernels::PageRun> all_runs(const api::CclCommandTensor& t, const api::AddrGenParams& ag, uint32_t max_pages,
                                       uint32_t page_size = 2048) {
  api::SliceWalker w = api::make_slice_walker(t);
  std::vector<kernels::PageRun> runs;
  while (!w.done()) {
    runs.push_back(kernels::next_page_run(w, ag, page_size, max_pages));
  }
  return runs;
}

// A 4400 B ROW_MAJOR row (not a multiple of 32 B) moved in fabric payloads: two pieces, the
// first 2208 B (32 B-aligned), the last the 2192 B left. A run that ends a row is short by
// what its last piece lacks; one that stops before the end is whole pieces.
TEST(InterpreterPlan, RunsEndingARowWithAShortLastPieceCarryItsBytes) {
  const api::CclCommandTensor t = api::to_command_tensor(whole_tensor({1, 1, 3, 2}));
  api::AddrGenParams ag{};
  ag.layout = api::TensorMemoryLayout::INTERLEAVED;
  ag.interleaved = api::InterleavedAddrGenParams{0x1000, 12, 4416, 2, 2208, 2192};
  const auto whole_rows = all_runs(t, ag, 8, 2208);
  ASSERT_EQ(whole_rows.size(), 3u);
  for (uint32_t row = 0; row < 3; ++row) {
    EXPECT_EQ(whole_rows[row].num_pages, 2u);
    EXPECT_EQ(whole_rows[row].bytes, 4400u);
    EXPECT_EQ(whole_rows[row].address, 0x1000u);
    EXPECT_EQ(whole_rows[row].target, row);
  }
  const auto pieces = all_runs(t, ag, 1, 2208);
  ASSERT_EQ(pieces.size(), 6u);
  for (uint32_t i = 0; i < 6; ++i) {
    EXPECT_EQ(pieces[i].bytes, i % 2 == 0 ? 2208u : 2192u);
    EXPECT_EQ(pieces[i].address, 0x1000u + (i % 2) * 2208u);
  }
}

TEST(InterpreterPlan, InterleavedRunsAreSinglePages) {
  const api::CclCommandTensor t = api::to_command_tensor(whole_tensor({1, 1, 2, 3}));
  api::AddrGenParams ag{};
  ag.layout = api::TensorMemoryLayout::INTERLEAVED;
  ag.interleaved = api::InterleavedAddrGenParams{0x1000, 4, 2048};
  const auto runs = all_runs(t, ag, 8);
  ASSERT_EQ(runs.size(), 6u);
  for (uint32_t i = 0; i < 6; ++i) {
    EXPECT_EQ(runs[i].first_page, i);
    EXPECT_EQ(runs[i].num_pages, 1u);
    EXPECT_EQ(runs[i].target, i % 4);
    EXPECT_EQ(runs[i].address, 0x1000 + (i / 4) * 2048);
  }
}

TEST(InterpreterPlan, ShardedRunsStopAtShardRowsSliceRowsAndPacket) {
  // Width-sharded 2 x 8 pages, 4 pages per shard: core = column / 4.
  api::AddrGenParams ag{};
  ag.layout = api::TensorMemoryLayout::WIDTH_SHARDED;
  ag.sharded = api::ShardedAddrGenParams{api::TensorMemoryLayout::WIDTH_SHARDED,
                                         2,
                                         64,
                                         8,
                                         api::ShardingContiguityMode::NO_SHARD_PADDING,
                                         4,
                                         2,
                                         0x5000};
  // Slice columns 2..7 of both rows.
  const api::CclCommandTensor t{{1, 1, 2, 8}, {1, 1, 2, 6}, {0, 0, 0, 2}, {0, 0, 0, 0}, 12};
  auto runs = all_runs(t, ag, 16);
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].first_page, 2u);  // columns 2-3 on core 0
  EXPECT_EQ(runs[0].num_pages, 2u);
  EXPECT_EQ(runs[0].target, 0u);
  EXPECT_EQ(runs[0].address, 0x5000u + 2 * 64);
  EXPECT_EQ(runs[1].first_page, 4u);  // columns 4-7 on core 1
  EXPECT_EQ(runs[1].num_pages, 4u);
  EXPECT_EQ(runs[1].target, 1u);
  EXPECT_EQ(runs[1].address, 0x5000u);
  EXPECT_EQ(runs[2].first_page, 10u);  // row 1
  EXPECT_EQ(runs[2].address, 0x5000u + (4 + 2) * 64);
  EXPECT_EQ(runs[3].first_page, 12u);
  // A 3-page packet splits the 4-page shard row.
  runs = all_runs(t, ag, 3);
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_EQ(runs[1].num_pages, 3u);
  EXPECT_EQ(runs[2].first_page, 7u);
  EXPECT_EQ(runs[2].num_pages, 1u);
}

// ---- Runtime args ---------------------------------------------------------------------------

kargs::InterpreterSpec sample_spec() {
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = 7;
  spec.packet_size_in_pages = 2;
  spec.semaphore_ids = {0, 3};
  kargs::InterpreterStreamSpec s0;
  s0.tensor = kargs::InterleavedTensorArgs{0x4000, 2048, api::BufferType::DRAM, 12, 2048};
  s0.commands = cmd::encode_command(cmd::read_tensor_slice_to_cb(whole_tensor({1, 1, 1, 4}), 0));
  s0.num_commands = 1;
  kargs::InterpreterStreamSpec s1;
  kargs::ShardedTensorArgs sharded;
  sharded.address = 0x8000;
  sharded.page_size_bytes = 2048;
  sharded.layout = api::TensorMemoryLayout::HEIGHT_SHARDED;
  sharded.page_stride_bytes = 2048;
  sharded.pages_per_tensor_row = 4;
  sharded.pages_per_shard_width = 4;
  sharded.rows_per_shard_height = 1;
  sharded.cores = {{1, 1}, {2, 1}};
  s1.tensor = sharded;
  s1.commands = cmd::encode_command(cmd::local_write_cb_to_tensor_slice(whole_tensor({1, 1, 2, 4}), 0));
  s1.num_commands = 1;
  spec.streams = {s0, s1};
  return spec;
}

TEST(InterpreterArgs, BuilderOutputParsesBack) {
  const kargs::KernelArgs args = kargs::build_interpreter_args(sample_spec());
  ASSERT_EQ(args.compile_time.size(), kernels::interpreter::kNumCompileTimeArgs);
  EXPECT_EQ(args.compile_time[kernels::interpreter::kCtNumStreams], 2u);
  EXPECT_EQ(args.compile_time[kernels::interpreter::kCtPacketHeaderCbId], 7u);
  kernels::InterpreterArgs parsed{};
  const kernels::ArgsFault f =
      kernels::parse_interpreter_args(2, args.runtime.data(), static_cast<uint32_t>(args.runtime.size()), parsed);
  ASSERT_TRUE(f.ok()) << f.word;
  EXPECT_EQ(parsed.packet_size_in_pages, 2u);
  EXPECT_EQ(parsed.semaphore_id_mask, 0x9u);
  EXPECT_EQ(parsed.forward_connection_offset, 0u);
  EXPECT_EQ(parsed.streams[0].tensor.addrgen.layout, api::TensorMemoryLayout::INTERLEAVED);
  EXPECT_EQ(parsed.streams[0].tensor.addrgen.interleaved.num_banks, 12u);
  EXPECT_EQ(parsed.streams[0].tensor.addrgen.interleaved.base_address, 0x4000u);
  EXPECT_EQ(parsed.streams[1].tensor.addrgen.layout, api::TensorMemoryLayout::HEIGHT_SHARDED);
  EXPECT_EQ(parsed.streams[1].tensor.addrgen.sharded.shard_base_address, 0x8000u);
  EXPECT_EQ(args.runtime[parsed.streams[1].tensor.core_table_offset + 1], kernels::interpreter::pack_core_xy(2, 1));
  EXPECT_EQ(args.runtime[kargs::interpreter_tensor_address_arg(1)], 0x8000u);
  // The stream words are where the table says.
  const auto& s0 = parsed.streams[0];
  const std::vector<uint32_t> expected = sample_spec().streams[0].commands;
  ASSERT_EQ(s0.commands_words, expected.size());
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), args.runtime.begin() + s0.commands_offset));
}

// A stream may address an interleaved buffer in pieces of its page: k pieces of the stream's
// page size must fit in one aligned buffer page.
TEST(InterpreterArgs, PiecesOfBufferPages) {
  kargs::InterpreterSpec spec = sample_spec();
  spec.streams[0].tensor = kargs::InterleavedTensorArgs{0x4000, 192, api::BufferType::DRAM, 12, 768, 4};
  const kargs::KernelArgs args = kargs::build_interpreter_args(spec);
  kernels::InterpreterArgs parsed{};
  ASSERT_TRUE(
      kernels::parse_interpreter_args(2, args.runtime.data(), static_cast<uint32_t>(args.runtime.size()), parsed).ok());
  EXPECT_EQ(parsed.streams[0].tensor.addrgen.interleaved.pieces_per_page, 4u);
  EXPECT_EQ(parsed.streams[0].tensor.addrgen.interleaved.piece_bytes, 192u);
  EXPECT_EQ(kernels::page_stride_bytes(parsed.streams[0].tensor.addrgen), 192u);
  spec.streams[0].tensor = kargs::InterleavedTensorArgs{0x4000, 192, api::BufferType::DRAM, 12, 768, 5};  // 960 B > 768
  EXPECT_THROW(kargs::build_interpreter_args(spec), kargs::KernelArgsError);
  spec.streams[0].tensor = kargs::InterleavedTensorArgs{0x4000, 192, api::BufferType::DRAM, 12, 768, 0};
  EXPECT_THROW(kargs::build_interpreter_args(spec), kargs::KernelArgsError);
  // A shorter last piece: 3 x 192 B + 150 B = 726 B fit a 736 B page where 4 x 192 B do not.
  spec.streams[0].tensor = kargs::InterleavedTensorArgs{0x4000, 192, api::BufferType::DRAM, 12, 736, 4, 150};
  const kargs::KernelArgs short_last = kargs::build_interpreter_args(spec);
  ASSERT_TRUE(kernels::parse_interpreter_args(2, short_last.runtime.data(),
                                              static_cast<uint32_t>(short_last.runtime.size()), parsed)
                  .ok());
  EXPECT_EQ(parsed.streams[0].tensor.addrgen.interleaved.last_piece_bytes, 150u);
  for (const uint32_t bad_last : {193u, 161u}) {  // longer than a piece; 3 x 192 + 161 > 736
    spec.streams[0].tensor = kargs::InterleavedTensorArgs{0x4000, 192, api::BufferType::DRAM, 12, 736, 4, bad_last};
    EXPECT_THROW(kargs::build_interpreter_args(spec), kargs::KernelArgsError) << bad_last;
  }
  spec.streams[0].tensor = kargs::InterleavedTensorArgs{0x4000, 192, api::BufferType::DRAM, 12, 768, 1, 100};
  EXPECT_THROW(kargs::build_interpreter_args(spec), kargs::KernelArgsError);  // a last piece of whole pages
}

// A streaming command whose worker run reaches past the pages of the buffer its stream's
// generator addresses is refused (the device would read or write outside the buffer, silently;
// bug bash, session 44). Only the pages the run reaches count: a tensor larger than the buffer
// whose run stays inside is fine, and buffer_pages 0 (unknown) checks nothing.
TEST(InterpreterArgs, RunsPastTheBuffersPagesAreRefused) {
  const auto spec_of = [](const api::TensorSlice& slice, uint32_t buffer_pages, uint32_t pieces = 1,
                          bool write = false) {
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = 7;
    kargs::InterleavedTensorArgs t{0x4000, pieces == 1 ? 2048u : 512u, api::BufferType::DRAM, 12, 2048, pieces};
    t.buffer_pages = buffer_pages;
    // A wait first: the check follows the stream's sticky state past other commands.
    const std::vector<cmd::Command> commands = {
        cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 1),
        write ? cmd::local_write_cb_to_tensor_slice(slice, 0) : cmd::read_tensor_slice_to_cb(slice, 0)};
    spec.semaphore_ids = {0};
    spec.streams = {kargs::InterpreterStreamSpec{t, cmd::encode_stream(commands), 2}};
    return spec;
  };
  const api::TensorSlice whole64 = whole_tensor({1, 1, 1, 64});
  EXPECT_NO_THROW(kargs::build_interpreter_args(spec_of(whole64, 64)));
  EXPECT_NO_THROW(kargs::build_interpreter_args(spec_of(whole64, 0)));  // unknown: not checked
  try {
    kargs::build_interpreter_args(spec_of(whole64, 32, 1, true));
    ADD_FAILURE() << "a 64-page run into a 32-page buffer was accepted";
  } catch (const kargs::KernelArgsError& e) {
    EXPECT_STREQ(e.what(),
                 "interpreter stream 0 command 1 (STREAM_CB_TO_TENSOR): its run reaches tensor page 63 of a tensor of "
                 "64 pages, past the 32 page(s) of the buffer its address generator addresses (at 0x4000); the "
                 "device would write outside the buffer. Expected a slice whose tensor fits the stream's buffer");
  }
  EXPECT_THROW(kargs::build_interpreter_args(spec_of(whole64, 63)), kargs::KernelArgsError);
  // A (1,1,4,32) tensor of 128 pages, its first two rows as the slice: the run ends at page 63.
  api::TensorSlice rows = whole_tensor({1, 1, 4, 32});
  rows.tensor_slice_shape = rows.worker_slice_shape = api::Shape4D{1, 1, 2, 32};
  EXPECT_NO_THROW(kargs::build_interpreter_args(spec_of(rows, 64)));
  EXPECT_THROW(kargs::build_interpreter_args(spec_of(rows, 63)), kargs::KernelArgsError);
  // The same rows from row 1: the run ends at page 95.
  rows.tensor_slice_offset = api::Shape4D{0, 0, 1, 0};
  EXPECT_NO_THROW(kargs::build_interpreter_args(spec_of(rows, 96)));
  EXPECT_THROW(kargs::build_interpreter_args(spec_of(rows, 95)), kargs::KernelArgsError);
  // A worker's part of the slice: its second row only (pages 64..95 of the tensor).
  rows.tensor_slice_offset = api::Shape4D{0, 0, 0, 0};
  rows.worker_slice_shape = api::Shape4D{1, 1, 1, 32};
  rows.worker_slice_offset = api::Shape4D{0, 0, 1, 0};
  EXPECT_NO_THROW(kargs::build_interpreter_args(spec_of(rows, 64)));
  EXPECT_THROW(kargs::build_interpreter_args(spec_of(rows, 63)), kargs::KernelArgsError);
  // Pieces: 16 buffer pages of 4 pieces each are 64 of the generator's pages.
  EXPECT_NO_THROW(kargs::build_interpreter_args(spec_of(whole64, 16, 4)));
  EXPECT_THROW(kargs::build_interpreter_args(spec_of(whole64, 15, 4)), kargs::KernelArgsError);
}

TEST(InterpreterArgs, BadArgsAreRejectedWithTheArgIndex) {
  kargs::KernelArgs args = kargs::build_interpreter_args(sample_spec());
  std::vector<uint32_t> rt = args.runtime;
  kernels::InterpreterArgs parsed{};
  const auto parse = [&](const std::vector<uint32_t>& words, uint32_t streams = 2) {
    return kernels::parse_interpreter_args(streams, words.data(), static_cast<uint32_t>(words.size()), parsed);
  };
  EXPECT_FALSE(parse(rt, 3).ok());
  EXPECT_FALSE(parse(std::vector<uint32_t>(rt.begin(), rt.begin() + 5)).ok());

  rt = args.runtime;
  rt[kernels::interpreter::kRtPacketSizeInPages] = 0;
  EXPECT_EQ(parse(rt).word, kernels::interpreter::kRtPacketSizeInPages);

  rt = args.runtime;
  const uint32_t words_at = kernels::interpreter::stream_block(1) + kernels::interpreter::kStreamCommandsWords;
  rt[words_at] = 1000;  // stream runs past the args
  EXPECT_EQ(parse(rt).word, kernels::interpreter::stream_block(1) + kernels::interpreter::kStreamCommandsOffset);

  rt = args.runtime;
  rt[kernels::interpreter::kRtForwardConnectionOffset] = static_cast<uint32_t>(rt.size()) - 3;
  EXPECT_EQ(parse(rt).word, kernels::interpreter::kRtForwardConnectionOffset);

  kargs::InterpreterSpec bad = sample_spec();
  std::get<kargs::InterleavedTensorArgs>(*bad.streams[0].tensor).aligned_page_size_bytes = 1024;
  EXPECT_THROW(kargs::build_interpreter_args(bad), kargs::KernelArgsError);
  bad = sample_spec();
  bad.semaphore_ids = {40};
  EXPECT_THROW(kargs::build_interpreter_args(bad), kargs::KernelArgsError);
}

TEST(InterpreterArgs, FaultMessagesNameTheCommand) {
  const kargs::KernelArgs args = kargs::build_interpreter_args(sample_spec());
  kernels::InterpreterArgs parsed{};
  ASSERT_TRUE(kernels::parse_interpreter_args(2, args.runtime.data(), static_cast<uint32_t>(args.runtime.size()), parsed)
                  .ok());
  const std::string text = kargs::describe_kernel_fault(
      kernels::kCclInterpreterKernelName, args.runtime,
      api::fault_code(api::SliceCheck::SLICE_OUTSIDE_TENSOR), 0, parsed.streams[1].commands_offset);
  EXPECT_NE(text.find("SLICE_OUTSIDE_TENSOR"), std::string::npos) << text;
  EXPECT_NE(text.find("stream 1 #0 STREAM_CB_TO_TENSOR"), std::string::npos) << text;
  const std::string router = kargs::describe_kernel_fault(kernels::kFabricRouterKernelName, {},
                                                          api::fault_code(KernelFaultCode::ROUTE_PAST_END),
                                                          api::kFaultNoCommand, 3);
  EXPECT_NE(router.find("ROUTE_PAST_END"), std::string::npos);
  EXPECT_NE(router.find("detail 3"), std::string::npos);
  EXPECT_NE(kargs::describe_interpreter_command(args.runtime, 5, 0).find("no such stream"), std::string::npos);
}

}  // namespace
