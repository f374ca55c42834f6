// The order of basild's own changes against the INVENTORYs it applies.
//
// An INVENTORY is a picture of ALPS taken at some moment while its query was
// in flight; basild's own RESERVEs and RELEASEs go on meanwhile. Applying a
// picture taken before a RELEASE ended would bring the released reservation
// back as "made outside basild"; one taken before a RESERVE ended would call
// the new reservation gone. So an INVENTORY may only change what it was
// taken after. ALPS's changecount cannot say which (RESERVE and RELEASE do
// not move it) and wall clocks step, so the order is a local sequence: an
// INVENTORY takes the next number when its query is sent (a Ticket), each
// change basild makes to a reservation or an intent takes the next one when
// it is recorded. A change numbered after an INVENTORY's ticket is one that
// INVENTORY may not undo.
//
// Only what an INVENTORY still in flight could misread is remembered: when
// the oldest ticket ends, every change older than the oldest one left (or
// all, when none is left) is forgotten, so the memory is bounded by the
// changes made during one INVENTORY call. One thread (the event loop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>

namespace basild {

class ChangeOrder {
 public:
  using Seq = std::uint64_t;

  // An INVENTORY in flight, from the moment its query is sent until it is
  // applied or given up. Move-only; ending it (destruction) lets the order
  // forget what no INVENTORY in flight could misread any more. The
  // ChangeOrder must outlive its tickets.
  class Ticket {
   public:
    Ticket(Ticket&& other) noexcept;
    Ticket& operator=(Ticket&& other) noexcept;
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    ~Ticket();
    Seq seq() const { return seq_; }

   private:
    friend class ChangeOrder;
    Ticket(ChangeOrder* order, Seq seq) : order_(order), seq_(seq) {}
    void end();
    ChangeOrder* order_ = nullptr;
    Seq seq_ = 0;
  };

  ChangeOrder() = default;
  ChangeOrder(const ChangeOrder&) = delete;
  ChangeOrder& operator=(const ChangeOrder&) = delete;

  // An INVENTORY query is being sent now.
  Ticket inventory_sent();

  // basild changed reservation `res_id` (at ALPS or in its records) now.
  void reservation_changed(std::uint64_t res_id);
  // Whether it did after the INVENTORY of `t` was sent.
  bool reservation_changed_after(std::uint64_t res_id, const Ticket& t) const;

  // A RESERVE for intent `id` is in flight / has ended (answered or
  // failed) / its intent is settled (nothing to remember).
  void intent_started(std::int64_t id);
  void intent_ended(std::int64_t id);
  void intent_settled(std::int64_t id);
  // Whether the INVENTORY of `t` cannot settle the intent: its RESERVE was
  // in flight, or ended after the INVENTORY was sent (the reservation may
  // have been made after the picture was taken).
  bool intent_unsettled_for(std::int64_t id, const Ticket& t) const;
  std::size_t intents_in_flight() const { return intents_in_flight_.size(); }

  // What is remembered now (changes and ended intents), for tests and stats.
  std::size_t remembered() const { return reservations_.size() + intents_ended_.size(); }
  std::size_t inventories_in_flight() const { return tickets_.size(); }

 private:
  void ticket_ended(Seq seq);
  void forget_old();

  Seq last_ = 0;
  std::multiset<Seq> tickets_;
  std::map<std::uint64_t, Seq> reservations_;
  std::set<std::int64_t> intents_in_flight_;
  std::map<std::int64_t, Seq> intents_ended_;
};

}  // namespace basild
