#include "basild/core/change_order.h"

#include <utility>

namespace basild {

ChangeOrder::Ticket::Ticket(Ticket&& other) noexcept
    : order_(std::exchange(other.order_, nullptr)), seq_(other.seq_) {}

ChangeOrder::Ticket& ChangeOrder::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    end();
    order_ = std::exchange(other.order_, nullptr);
    seq_ = other.seq_;
  }
  return *this;
}

ChangeOrder::Ticket::~Ticket() { end(); }

void ChangeOrder::Ticket::end() {
  if (order_ != nullptr) std::exchange(order_, nullptr)->ticket_ended(seq_);
}

ChangeOrder::Ticket ChangeOrder::inventory_sent() {
  const Seq seq = ++last_;
  tickets_.insert(seq);
  return Ticket(this, seq);
}

void ChangeOrder::reservation_changed(std::uint64_t res_id) {
  const Seq seq = ++last_;
  // A change no INVENTORY in flight predates needs no memory.
  if (!tickets_.empty()) reservations_[res_id] = seq;
}

bool ChangeOrder::reservation_changed_after(std::uint64_t res_id, const Ticket& t) const {
  auto it = reservations_.find(res_id);
  return it != reservations_.end() && it->second > t.seq();
}

void ChangeOrder::intent_started(std::int64_t id) {
  intents_in_flight_.insert(id);
  intents_ended_.erase(id);
}

void ChangeOrder::intent_ended(std::int64_t id) {
  const Seq seq = ++last_;
  intents_in_flight_.erase(id);
  if (!tickets_.empty()) intents_ended_[id] = seq;
}

void ChangeOrder::intent_settled(std::int64_t id) {
  intents_in_flight_.erase(id);
  intents_ended_.erase(id);
}

bool ChangeOrder::intent_unsettled_for(std::int64_t id, const Ticket& t) const {
  if (intents_in_flight_.count(id) != 0) return true;
  auto it = intents_ended_.find(id);
  return it != intents_ended_.end() && it->second > t.seq();
}

void ChangeOrder::ticket_ended(Seq seq) {
  auto it = tickets_.find(seq);
  if (it != tickets_.end()) tickets_.erase(it);
  forget_old();
}

// A change older than every INVENTORY still in flight is one each of them
// (and every later one) was taken after.
void ChangeOrder::forget_old() {
  if (tickets_.empty()) {
    reservations_.clear();
    intents_ended_.clear();
    return;
  }
  const Seq oldest = *tickets_.begin();
  std::erase_if(reservations_, [oldest](const auto& e) { return e.second < oldest; });
  std::erase_if(intents_ended_, [oldest](const auto& e) { return e.second < oldest; });
}

}  // namespace basild
