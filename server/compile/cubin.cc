#include "server/compile/cubin.h"

#include <gelf.h>
#include <libelf.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/escaping.h"

namespace ablation::compile {
namespace {

namespace ku = kernels::user;

constexpr int kEmCuda = 190;  // EM_CUDA: elf.h of Debian 12 has it, older ones may not
constexpr uint8_t kFormatSval = 4, kFormatHval = 3, kFormatBval = 2, kFormatFree = 1;
constexpr uint8_t kAttrRegCount = 0x2f, kAttrFrameSize = 0x11, kAttrParamInfo = 0x17;
// sm_80 on reserve 1 KiB of every block's shared memory for the system; an sm_90 cubin counts it
// in .nv.shared.<entry> (and says so with a .nv.shared.reserved.0 section), ptxas -v does not.
constexpr int64_t kReservedSmem = 1024;

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};

// One record of a .nv.info section: its attribute and value bytes.
struct Record {
  uint8_t attr = 0;
  std::string_view value;
};

std::vector<Record> Records(std::string_view data) {
  std::vector<Record> out;
  size_t at = 0;
  while (at + 2 <= data.size()) {
    const uint8_t format = uint8_t(data[at]), attr = uint8_t(data[at + 1]);
    if (format == kFormatSval) {
      if (at + 4 > data.size()) break;
      uint16_t n = 0;
      std::memcpy(&n, data.data() + at + 2, 2);
      if (at + 4 + n > data.size()) break;
      out.push_back({attr, data.substr(at + 4, n)});
      at += 4 + n;
    } else if (format == kFormatHval || format == kFormatBval) {
      if (at + 4 > data.size()) break;
      out.push_back({attr, data.substr(at + 2, 2)});
      at += 4;
    } else if (format == kFormatFree) {
      at += 2;
    } else {
      break;  // a format this reader does not know: the rest is not read
    }
  }
  return out;
}

uint32_t Word(std::string_view v, size_t at) {
  uint32_t w = 0;
  if (at + 4 <= v.size()) std::memcpy(&w, v.data() + at, 4);
  return w;
}

// What the ELF holds of the kernels asked for.
struct Cubin {
  int sm = 0;
  std::map<std::string, size_t> functions;        // global function symbols: their indices
  std::map<std::string, std::string> sections;    // the wanted ones: name, bytes
  std::map<std::string, uint64_t> section_sizes;  // name: size
};

// `wanted`: the sections whose bytes are kept (the rest are only measured: a file of many large,
// overlapping sections must not cost their sum in memory).
std::string ReadElf(const std::string& bytes, const std::set<std::string>& wanted, Cubin* out) {
  elf_version(EV_CURRENT);
  std::unique_ptr<Elf, ElfCloser> elf(elf_memory(const_cast<char*>(bytes.data()), bytes.size()));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) return "it is not an ELF file";
  GElf_Ehdr header;
  if (!gelf_getehdr(elf.get(), &header) || header.e_ident[EI_CLASS] != ELFCLASS64)
    return "it is not a 64-bit ELF file";
  if (header.e_machine != kEmCuda)
    return "it is an ELF file for machine " + std::to_string(header.e_machine) +
           ", not a CUDA cubin (EM_CUDA, 190)";
  out->sm = int((header.e_flags >> 8) & 0xff);
  // Every table and every byte a section or segment claims lies within the file: the driver
  // reads all of them when it loads the cubin.
  const uint64_t size = bytes.size();
  const auto within = [size](uint64_t offset, uint64_t length) {
    return offset <= size && length <= size - offset;
  };
  if (!within(header.e_shoff, uint64_t(header.e_shnum) * header.e_shentsize) ||
      !within(header.e_phoff, uint64_t(header.e_phnum) * header.e_phentsize))
    return "it is cut short: its headers lie past its " + std::to_string(size) + " bytes";
  for (int i = 0; i < int(header.e_phnum); ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf.get(), i, &ph) || !within(ph.p_offset, ph.p_filesz))
      return "it is cut short: a segment lies past its " + std::to_string(size) + " bytes";
  }
  size_t names = 0;
  if (elf_getshdrstrndx(elf.get(), &names) != 0) return "its section names cannot be read";
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.get(), scn)) != nullptr;) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) return "a section header cannot be read";
    const char* name = elf_strptr(elf.get(), names, sh.sh_name);
    if (!name) return "a section's name cannot be read";
    out->section_sizes[name] = sh.sh_size;
    if (sh.sh_type != SHT_NOBITS && !within(sh.sh_offset, sh.sh_size))
      return std::string("it is cut short: section ") + name + " lies past its " +
             std::to_string(size) + " bytes";
    const bool keep = wanted.count(name) > 0;
    if (!keep && sh.sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = sh.sh_type == SHT_NOBITS ? nullptr : elf_getdata(scn, nullptr);
    if (keep && data && data->d_buf)
      out->sections[name] = std::string(static_cast<const char*>(data->d_buf), data->d_size);
    if (sh.sh_type != SHT_SYMTAB) continue;
    if (!data) return "its symbol table cannot be read";
    const size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, int(i), &sym)) return "a symbol cannot be read";
      const char* s = elf_strptr(elf.get(), sh.sh_link, sym.st_name);
      if (s && GELF_ST_TYPE(sym.st_info) == STT_FUNC && GELF_ST_BIND(sym.st_info) == STB_GLOBAL)
        out->functions[s] = i;
    }
  }
  return "";
}

// "sm_90a" -> 90; 0 for what is not an sm_ architecture.
int SmOf(const std::string& arch) {
  int sm = 0;
  size_t i = 3;
  if (arch.rfind("sm_", 0) != 0) return 0;
  for (; i < arch.size() && arch[i] >= '0' && arch[i] <= '9'; ++i) sm = sm * 10 + (arch[i] - '0');
  return sm;
}

// The entry's registers, stack frame and parameters from .nv.info and .nv.info.<entry>.
void Report(const Cubin& c, const std::string& entry, ku::CompileResult* r) {
  const size_t symbol = c.functions.at(entry);
  r->ptxas.found = false;
  if (auto it = c.sections.find(".nv.info"); it != c.sections.end())
    for (const Record& rec : Records(it->second)) {
      if (Word(rec.value, 0) != symbol || rec.value.size() < 8) continue;
      if (rec.attr == kAttrRegCount) {
        r->ptxas.registers = int(Word(rec.value, 4));
        r->ptxas.found = true;
      }
      if (rec.attr == kAttrFrameSize) r->ptxas.stack_bytes = Word(rec.value, 4);
    }
  std::map<uint16_t, size_t> params;  // ordinal: bytes
  if (auto it = c.sections.find(".nv.info." + entry); it != c.sections.end())
    for (const Record& rec : Records(it->second)) {
      if (rec.attr != kAttrParamInfo || rec.value.size() < 12) continue;
      uint16_t ordinal = 0;
      std::memcpy(&ordinal, rec.value.data() + 4, 2);
      params[ordinal] = size_t(Word(rec.value, 8) >> 18);
    }
  // Every ordinal from 0 once, or nothing said (the worker checks the parameters at load).
  for (const auto& [ordinal, bytes] : params) {
    if (ordinal != r->param_bytes.size()) {
      r->param_bytes.clear();
      break;
    }
    r->param_bytes.push_back(bytes);
  }
  r->ptxas.spill_store_bytes = r->ptxas.spill_load_bytes = -1;  // a cubin does not say
  if (auto it = c.section_sizes.find(".nv.shared." + entry); it != c.section_sizes.end()) {
    int64_t smem = int64_t(it->second);
    if (c.section_sizes.count(".nv.shared.reserved.0") && smem >= kReservedSmem)
      smem -= kReservedSmem;
    r->ptxas.static_smem_bytes = smem;
  }
}

}  // namespace

ku::CompileResult ReadCubin(const ku::CompileRequest& request) {
  ku::CompileResult r;
  r.compiler = "cubin (as given)";
  r.options = "none: read, not compiled";
  const std::string& name = request.source_name;
  std::string bytes;
  if (!absl::Base64Unescape(request.source, &bytes) || bytes.empty()) {
    r.log = name +
            ": not base64 of a cubin (the client encodes a file that begins with an ELF "
            "header; a request's source for language \"cubin\" is base64, RFC 4648)\n";
    return r;
  }
  Cubin c;
  if (std::string why = ReadElf(bytes, {".nv.info", ".nv.info." + request.entry}, &c);
      !why.empty()) {
    r.log = name + ": " + why + "\n";
    return r;
  }
  const int want = SmOf(request.arch);
  if (c.sm != want) {
    r.log = name + ": the cubin is for sm_" + std::to_string(c.sm) + "; this daemon's GPU runs " +
            request.arch + " (a cubin runs on its own architecture alone: build it for that one)\n";
    return r;
  }
  std::vector<std::pair<std::string, std::string>> wanted = {{"entry", request.entry}};
  for (const std::string& e : request.also_entries) wanted.emplace_back("reference entry", e);
  for (const auto& [what, entry] : wanted)
    if (!c.functions.count(entry)) {
      r.log = name + ": the cubin has no kernel named " + entry + " (the manifest's " + what +
              "; an extern \"C\" __global__ function keeps its name)\n";
      return r;
    }
  Report(c, request.entry, &r);
  r.cubin = std::move(bytes);
  r.ok = true;
  return r;
}

}  // namespace ablation::compile
