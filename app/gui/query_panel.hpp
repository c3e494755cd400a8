// The Query panel: read-only SQL over the open profile (app/gui/query.hpp), as Perfetto's query page — a
// statement to edit or one of the saved ones to start from, run with Ctrl+Enter on a worker thread, its rows
// in a clipped table, copied as tab-separated text or exported as CSV. A panel object: it owns its state
// (the text, the statement running, the last result) and draws itself from what the view hands it, the open
// profile's files; View.hpp holds it behind a pointer and includes none of it.
#pragma once

#include <filesystem>
#include <string>

#include "app/gui/query.hpp"

namespace meshscope::gui {

class QueryPanel {
 public:
  // The open profile's files: the profile the SQL runs on, and what the user opened (the CSV export is
  // written beside it by default). Both empty when no profile is open.
  struct Files {
    std::filesystem::path msdb, source;
  };

  void draw(const Files& open);
  // Runs SQL on MSDB on a worker thread, as the Run button does (nothing while a statement runs).
  void run(const std::filesystem::path& msdb, const std::string& sql);
  bool running() const { return state_.job.valid(); }
  const QueryResult* result() const { return state_.has_result ? &state_.result : nullptr; }

 private:
  void poll();
  void draw_result(const Files& open);

  QueryPanelState state_;
};

}  // namespace meshscope::gui
