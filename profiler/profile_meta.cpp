#include "profiler/profile_meta.hpp"

#include "profiler/output_file.hpp"
#include "profiler/profile.hpp"
#include "profiler/sqlite_util.hpp"

namespace meshscope {

void write_meta(const std::filesystem::path& own_file, const std::vector<MetaChange>& changes,
                const std::filesystem::path& shown) {
  sql::Database db(own_file, false, shown);
  db.harden();
  db.exec("BEGIN IMMEDIATE");
  auto put = db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
  auto remove = db.prepare("DELETE FROM meta WHERE key = ?");
  // meta's values are NOT NULL (bind_text binds NULL for an empty text): an empty value removes the key too.
  for (const MetaChange& change : changes) {
    if (change.value && !change.value->empty()) {
      put.bind_text(1, change.key);
      put.bind_text(2, *change.value);
      put.run();
    } else {
      remove.bind_text(1, change.key);
      remove.run();
    }
  }
  db.exec("COMMIT");
}

void update_meta(const std::filesystem::path& path, const std::vector<MetaChange>& changes) {
  Profile::load(path, LoadOptions{.events = false});  // one clear line for a file that is no profile
  OutputFile output(path);
  with_output_named(output.scratch(), path, [&] {
    sql::copy_database(path, output.scratch(), path);
    write_meta(output.scratch(), changes, path);
  });
  output.publish();
}

}  // namespace meshscope
