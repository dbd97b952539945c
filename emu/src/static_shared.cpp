// A kernel's static __shared__ objects: its function-local `static
// thread_local` objects (what the __shared__ macro makes them), found by name
// in the ELF symbol table once per kernel, for the launch's size limit and
// for initcheck's poisoning of each block's copies (RL_EMU_POISON=1).  The
// same table names kernels with internal linkage (symbol_table_name).
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "internal.hpp"

namespace rl::emu::detail {
namespace {

// A mapped ELF file's symbol table, read once per file (the mapping is kept
// for the process's life).
struct SymbolTable {
  const Elf64_Sym* symbols = nullptr;
  std::size_t count = 0;
  const char* names = nullptr;
  std::size_t names_bytes = 0;
  bool executable = false;  // ET_EXEC: symbol values are absolute
  // Function-local thread_local objects ("_ZZ..." STT_TLS symbols): the
  // candidates for static __shared__ objects, collected once.
  std::vector<const Elf64_Sym*> local_tls;

  std::string_view name(const Elf64_Sym& s) const {
    if (s.st_name >= names_bytes) return {};
    const char* p = names + s.st_name;
    return {p, strnlen(p, names_bytes - s.st_name)};
  }
};

SymbolTable map_symbols(const char* path) {
  SymbolTable table;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return table;
  struct stat st {};
  void* image = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size > 0)
    image = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (image == MAP_FAILED) return table;
  const auto* bytes = static_cast<const unsigned char*>(image);
  const auto size = static_cast<std::size_t>(st.st_size);
  Elf64_Ehdr header{};
  if (size < sizeof header) return table;
  std::memcpy(&header, bytes, sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_shoff + header.e_shnum * sizeof(Elf64_Shdr) > size)
    return table;
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(bytes + header.e_shoff);
  for (std::size_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr& symtab = sections[i];
    if (symtab.sh_type != SHT_SYMTAB || symtab.sh_link >= header.e_shnum) continue;
    const Elf64_Shdr& strtab = sections[symtab.sh_link];
    if (symtab.sh_offset + symtab.sh_size > size || strtab.sh_offset + strtab.sh_size > size)
      continue;
    table.symbols = reinterpret_cast<const Elf64_Sym*>(bytes + symtab.sh_offset);
    table.count = symtab.sh_size / sizeof(Elf64_Sym);
    table.names = reinterpret_cast<const char*>(bytes + strtab.sh_offset);
    table.names_bytes = strtab.sh_size;
    table.executable = header.e_type == ET_EXEC;
    break;
  }
  for (std::size_t i = 0; i < table.count; ++i) {
    const Elf64_Sym& s = table.symbols[i];
    if (ELF64_ST_TYPE(s.st_info) == STT_TLS && table.name(s).starts_with("_ZZ"))
      table.local_tls.push_back(&s);
  }
  return table;
}

std::mutex g_symbols_mutex;

// The symbol table of the object holding `address`, and that object's base.
const SymbolTable* symbols_of(const void* address, const void** base) {
  static std::unordered_map<std::string, SymbolTable> files;
  Dl_info info{};
  if (dladdr(address, &info) == 0) return nullptr;
  *base = info.dli_fbase;
  const std::string path =
      info.dli_fname != nullptr && *info.dli_fname != '\0' ? info.dli_fname : "/proc/self/exe";
  auto file = files.find(path);
  if (file == files.end()) file = files.emplace(path, map_symbols(path.c_str())).first;
  return &file->second;
}

std::string_view function_name(const SymbolTable& table, const void* base, const void* function) {
  const auto address = reinterpret_cast<std::uintptr_t>(function);
  const std::uintptr_t wanted =
      table.executable ? address : address - reinterpret_cast<std::uintptr_t>(base);
  for (std::size_t i = 0; i < table.count; ++i) {
    const Elf64_Sym& s = table.symbols[i];
    if (ELF64_ST_TYPE(s.st_info) == STT_FUNC && s.st_value == wanted) return table.name(s);
  }
  return {};
}

struct SharedObject {
  std::size_t offset;  // in the module's TLS block
  std::size_t bytes;
};

struct KernelShared {
  const void* module_base = nullptr;  // dli_fbase of the object holding the kernel
  std::vector<SharedObject> objects;
  std::size_t total = 0;
};

// A kernel's static __shared__ objects are its function-local `static
// thread_local` objects (what the __shared__ macro makes them), named
// "_ZZ" <the kernel's encoding> "E" <entity> by the Itanium C++ ABI.  Objects
// declared in device functions the kernel calls carry those functions' names
// and are not found.
const KernelShared& kernel_shared(const void* kernel) {
  static std::unordered_map<const void*, KernelShared> kernels;
  std::lock_guard lock(g_symbols_mutex);
  if (auto it = kernels.find(kernel); it != kernels.end()) return it->second;
  KernelShared& found = kernels[kernel];
  const SymbolTable* table = symbols_of(kernel, &found.module_base);
  if (table == nullptr || table->local_tls.empty()) return found;
  const std::string_view mangled = function_name(*table, found.module_base, kernel);
  if (mangled.empty()) return found;  // stripped: nothing is checked
  const std::string prefix =
      mangled.starts_with("_Z")
          ? "_ZZ" + std::string(mangled.substr(2)) + "E"
          : "_ZZ" + std::to_string(mangled.size()) + std::string(mangled) + "E";  // extern "C"
  for (const Elf64_Sym* s : table->local_tls) {
    if (!table->name(*s).starts_with(prefix)) continue;
    found.objects.push_back({static_cast<std::size_t>(s->st_value), s->st_size});
    found.total += s->st_size;
  }
  return found;
}

// The calling host thread's TLS block of the object loaded at `base`.
void* tls_block(const void* base) {
  struct Search {
    const void* base;
    void* block;
  } search{base, nullptr};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        if (reinterpret_cast<const void*>(info->dlpi_addr) != s->base &&
            !(info->dlpi_addr == 0 && s->base != nullptr && info->dlpi_name[0] == '\0'))
          return 0;
        s->block = info->dlpi_tls_data;
        return 1;
      },
      &search);
  return search.block;
}

}  // namespace

std::string symbol_table_name(const void* function) {
  std::lock_guard lock(g_symbols_mutex);
  const void* base = nullptr;
  const SymbolTable* table = symbols_of(function, &base);
  return table == nullptr ? std::string() : std::string(function_name(*table, base, function));
}

std::size_t static_shared_bytes(const void* kernel) {
  return kernel_shared(kernel).total;
}

void poison_static_shared(const void* kernel) {
  const KernelShared& shared = kernel_shared(kernel);
  if (shared.objects.empty()) return;
  auto* block = static_cast<unsigned char*>(tls_block(shared.module_base));
  if (block == nullptr) return;  // a dlopen()ed module whose TLS this thread has not touched yet
  for (const SharedObject& o : shared.objects) std::memset(block + o.offset, kPoisonByte, o.bytes);
}

}  // namespace rl::emu::detail
