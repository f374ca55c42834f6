// SPANK_PLUGIN(name, 1) of <slurm/spank.h>, spelt out for a C++ module
// built with hidden visibility: in C++ a const object at namespace scope is
// local to its file unless declared extern, and each symbol Slurm looks up
// is made visible. Used inside an extern "C" block, after <slurm/spank.h>.
#pragma once

#define BASIL_SPANK_PLUGIN(name)                                                              \
  __attribute__((visibility("default"))) extern const char plugin_name[] = #name;           \
  __attribute__((visibility("default"))) extern const char plugin_type[] = "spank";         \
  __attribute__((visibility("default"))) extern const unsigned int plugin_version = SLURM_VERSION_NUMBER; \
  __attribute__((visibility("default"))) extern const unsigned int spank_plugin_version = 1
