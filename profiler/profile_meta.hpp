// Facts about a whole profile that a user may change after it was written, kept in its meta table (what the
// job ran, stated with `meshscope annotate`; docs/PROFILE.md "meta"). A profile is never changed in place:
// the change is made in a copy beside it, which then replaces it at once (a killed run leaves the old file as
// it was).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace meshscope {

struct MetaChange {
  std::string key;
  std::optional<std::string> value;  // nullopt: the key is removed
};

// Applies CHANGES to the meta table of OWN_FILE, a profile this process has just written and not yet
// published (an import's output before it appears), in one transaction. Messages name SHOWN.
void write_meta(const std::filesystem::path& own_file, const std::vector<MetaChange>& changes,
                const std::filesystem::path& shown);

// Applies CHANGES to the profile at PATH: copied beside itself (nothing the file holds runs), changed, and
// renamed over it (a link is written through). Throws Error naming PATH when it is no profile or cannot be
// replaced; the profile is then unchanged.
void update_meta(const std::filesystem::path& path, const std::vector<MetaChange>& changes);

}  // namespace meshscope
