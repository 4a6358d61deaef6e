"""Turns and error rate of an InterCode episode, counted as StateFlow's Table 1 counts them."""

from statebound.envs.intercode_tally import ActionTally


def test_turns_count_commands_unparsable_actions_and_the_agents_submit():
    tally = ActionTally()
    tally.command(ok=True)
    tally.command(ok=False)
    tally.unparsable()
    tally.submit(by_agent=True)
    assert (tally.turns, tally.executed, tally.failed, tally.invalid, tally.submits) == (4, 2, 1, 1, 1)
    assert tally.error_rate == 1 / 3  # one failed of two commands and the submit; unparsable left out


def test_the_submit_at_the_turn_limit_is_no_turn_but_counts_in_the_error_rate():
    tally = ActionTally()
    tally.command(ok=False)
    tally.submit(by_agent=False)
    assert (tally.turns, tally.error_rate) == (1, 0.5)
    assert ActionTally().error_rate == 0.0
