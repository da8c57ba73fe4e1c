"""A program written against LEAPP's API with only the import lines pointing at patchport:
a joint-space filter with recurrent state, labels and a graph frequency. Run as a script
by test_leapp_style_program.py (``python leapp_style_program.py OUT_DIR``)."""

import sys

import torch

import patchport as leapp
from patchport import GraphConfigs, TensorSemantics, annotate
from patchport.utils.enums import InputKindEnum, OutputKindEnum

JOINTS = ["shoulder", "elbow"]
GAIN = torch.tensor([1.5, 0.5])


def filter_step(position, command, memory):
    error = command - position
    memory = 0.8 * memory + 0.2 * error
    return memory, position + GAIN * memory


def main(save_path):
    leapp.start(name="arm_filter", save_path=save_path)
    memory = torch.zeros(2)
    for step in range(3):
        position, command = annotate.input_tensors(
            "filter",
            [
                TensorSemantics(
                    "position",
                    torch.tensor([0.1, -0.1]) * step,
                    kind=InputKindEnum.JOINT_POSITION,
                    element_names=JOINTS,
                ),
                TensorSemantics(
                    "command", torch.tensor([1.0, 0.5]), kind=InputKindEnum.COMMAND_JOINT_POSITION
                ),
            ],
        )
        state = annotate.state_tensors("filter", {"memory": memory})
        memory, target = filter_step(position, command, state)
        annotate.update_state("filter", {"memory": memory})
        annotate.output_tensors(
            "filter",
            TensorSemantics("target", target, kind=OutputKindEnum.JOINT_POSITION),
            export_with="jit",
        )
    leapp.stop()
    leapp.compile_graph(graph_configs=GraphConfigs(frequency=100), visualize=False)


if __name__ == "__main__":
    main(sys.argv[1])
