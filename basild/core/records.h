// INVENTORY is the authority: a pure planner that compares one INVENTORY
// with what basild has recorded and says what to change. The daemon applies
// the plan to the store. No I/O here.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "basil_proto/model.h"

namespace basild {

// A reservation basild holds as active (not released, not gone).
struct ActiveRecord {
  std::uint64_t res_id = 0;
  std::string batch_id;
  // Changed by basild after the INVENTORY was sent: its absence proves nothing.
  bool newer_than_inventory = false;
};

// An intent whose RESERVE may or may not have reached ALPS.
struct PendingIntent {
  std::int64_t id = 0;
  std::string batch_id;
  // True while its RESERVE is in flight, or when it ended after the
  // INVENTORY was requested: this INVENTORY cannot settle it.
  bool unsettled_by_this_inventory = false;
  // A scheduler's RESERVE forwarded by basild: still pending means its
  // answer never reached the caller, who was told the call failed and will
  // reserve again, so a reservation ALPS made for it is a stray.
  bool forwarded = false;
};

struct RecordsPlan {
  struct Adopt {
    std::int64_t intent_id = 0;
    basil::Reservation reservation;
  };
  std::vector<Adopt> adopt;                 // intent settled: ALPS holds it
  std::vector<Adopt> stray;                 // forwarded intent settled: ALPS holds it, release it
  std::vector<std::int64_t> drop;           // intent settled: the RESERVE never happened
  std::vector<std::uint64_t> gone;          // active record, absent from ALPS
  std::vector<basil::Reservation> seen;     // in ALPS, unknown to basild (made by others)
  std::vector<std::uint64_t> in_flight;     // unknown, but its batch id has a RESERVE in flight: left alone
  std::vector<std::uint64_t> still_there;   // active and listed: last_seen moves on
};

// `inventory` must carry its ReservationArray (has_reservation_array).
// `changed_since`: reservations basild changed after the INVENTORY was sent
// (released them, saw them go): a listing of one of them that basild no
// longer holds active is older than basild's own knowledge, and is neither
// adopted nor recorded as made by others.
RecordsPlan plan_records(const basil::Inventory& inventory, const std::vector<ActiveRecord>& active,
                         const std::vector<PendingIntent>& intents,
                         const std::set<std::uint64_t>& changed_since = {});

// Totals of a reservation as recorded: its nodes (from the inventory's
// allocations when present) and the width/depth/nppn of its BASIL
// placeholder application.
struct ReservationShape {
  basil::NidList nodes;
  std::uint64_t width = 0;
  std::uint32_t depth = 0;
  std::uint32_t nppn = 0;
};
ReservationShape shape_of(const basil::Inventory& inventory, const basil::Reservation& reservation);

}  // namespace basild
