"""Trains a small CNN on scikit-learn's handwritten digits (load_digits,
shipped with Debian's python3-sklearn: no download) with coop from Python:
the training step planned into half of the arena it needs without
rematerialization, run on the runtime's CPU backend with real batches,
next to PyTorch eager training (coop.reference_step: torch.optim's Adam,
dropout drawing the runtime's masks of each step) of the same model from
the same initial weights on the same batches in the same order. Checks
that the two loss curves and test accuracies agree within fp32 tolerance
and plots them (digits.png).

    python3 examples/digits/train_digits.py [--out DIR] [--epochs N]

The tools and libcoop_runtime.so come from $COOP_BUILD_DIR, else the
repository's build/ (docs/python.md)."""
import argparse
import copy
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import matplotlib  # noqa: E402
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from torch import nn  # noqa: E402

import coop  # noqa: E402

BATCH = 48
TRAIN = 1440  # 30 batches per epoch; the other 357 images are the test set
RATIO = 0.5
DROPOUT = 0.25
LR = 3e-3
# |coop - torch| <= ATOL + RTOL * |torch| for every step's loss (the
# runtime's reductions sum in double in a fixed order, torch's do not).
RTOL, ATOL = 1e-4, 1e-5


class DigitsCNN(nn.Module):
    """A 3x3 convolution to 6 channels, nine residual 3x3 convolutions
    (x + tanh(conv(x))) at 8x8, an average pool, a 3x3 convolution to 12
    channels at 4x4, dropout and a linear classifier. Activations, not
    weights, fill its arena, so that half of it is room above the memory
    floor (the largest working set, a convolution's backward, plus the
    weights).
    Smooth: with ReLU or max-pooling, a rounding difference in the last
    bit flips a unit or a window's maximum, and the two trainings part
    after a few dozen steps."""

    def __init__(self, blocks=9, width=6, dropout=DROPOUT):
        super().__init__()
        self.stem = nn.Conv2d(1, width, 3, padding=1)
        self.blocks = nn.ModuleList(nn.Conv2d(width, width, 3, padding=1)
                                    for _ in range(blocks))
        self.head = nn.Conv2d(width, 2 * width, 3, padding=1)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(2 * width * 4 * 4, 10)

    def forward(self, x):
        x = torch.tanh(self.stem(x))
        for conv in self.blocks:
            x = x + torch.tanh(conv(x))
        x = torch.tanh(self.head(F.avg_pool2d(x, 2)))
        return self.classifier(self.dropout(x.flatten(1)))


def digits():
    """(train images, train labels, test images, test labels): 8x8 images
    scaled to [0, 1] as [N, 1, 8, 8] float32, labels int64."""
    data = load_digits()
    images = torch.from_numpy((data.images / 16.0).astype(np.float32)).unsqueeze(1)
    labels = torch.from_numpy(data.target.astype(np.int64))
    return images[:TRAIN], labels[:TRAIN], images[TRAIN:], labels[TRAIN:]


def accuracy(model, images, labels):
    model.eval()
    with torch.no_grad():
        correct = (model(images).argmax(1) == labels).sum().item()
    model.train()
    return correct / len(labels)


def plot(path, coop_losses, torch_losses, coop_accuracy, torch_accuracy, ratio_text,
         largest_difference):
    steps = np.arange(1, len(coop_losses) + 1)
    epochs = np.arange(1, len(coop_accuracy) + 1)
    figure, (loss_axes, accuracy_axes) = plt.subplots(1, 2, figsize=(11, 4))
    loss_axes.plot(steps, torch_losses, color="tab:blue", linewidth=3, alpha=0.5,
                   label="PyTorch eager")
    loss_axes.plot(steps, coop_losses, color="tab:red", linewidth=1, linestyle="--",
                   label=f"coop, CPU runtime, {ratio_text}")
    loss_axes.set_xlabel("step")
    loss_axes.set_ylabel("training loss (cross entropy)")
    loss_axes.set_yscale("log")
    loss_axes.set_title(f"max |loss difference| {largest_difference:.2e}")
    loss_axes.legend()
    accuracy_axes.plot(epochs, torch_accuracy, "o-", color="tab:blue", linewidth=3,
                       alpha=0.5, label="PyTorch eager")
    accuracy_axes.plot(epochs, coop_accuracy, "x--", color="tab:red",
                       label=f"coop, CPU runtime, {ratio_text}")
    accuracy_axes.set_xlabel("epoch")
    accuracy_axes.set_ylabel("test accuracy (357 images)")
    accuracy_axes.set_xticks(epochs)
    accuracy_axes.legend(loc="lower right")
    figure.suptitle("Small CNN with dropout, Adam, on scikit-learn's digits: coop vs "
                    "PyTorch, same data order and masks")
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=HERE, help="directory for digits.png")
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()
    start = time.monotonic()

    train_x, train_y, test_x, test_y = digits()
    torch.manual_seed(0)
    model = DigitsCNN()
    twin = copy.deepcopy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    twin_optimizer = torch.optim.Adam(twin.parameters(), lr=LR)

    compiled = coop.compile(model, (train_x[:BATCH],), F.cross_entropy, optimizer,
                            targets=(train_y[:BATCH],), ratio=RATIO)
    print(compiled.report, end="")
    session = compiled.session(model, optimizer)

    order = np.random.RandomState(0)
    coop_losses, torch_losses, coop_accuracy, torch_accuracy = [], [], [], []
    for epoch in range(args.epochs):
        permutation = torch.from_numpy(order.permutation(TRAIN))
        for first in range(0, TRAIN, BATCH):
            batch = permutation[first:first + BATCH]
            x, y = train_x[batch], train_y[batch]
            step = session.step_index
            coop_losses.append(session.step(x, y))
            torch_losses.append(coop.reference_step(compiled, twin, twin_optimizer, x, y,
                                                    step=step))
        session.write_back()
        coop_accuracy.append(accuracy(model, test_x, test_y))
        torch_accuracy.append(accuracy(twin, test_x, test_y))
        print(f"epoch {epoch + 1}: loss coop {coop_losses[-1]:.6f} torch "
              f"{torch_losses[-1]:.6f}, test accuracy coop {coop_accuracy[-1]:.4f} "
              f"torch {torch_accuracy[-1]:.4f}")

    differences = [abs(ours - theirs) for ours, theirs in zip(coop_losses, torch_losses)]
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "digits.png")
    plot(path, coop_losses, torch_losses, coop_accuracy, torch_accuracy,
         f"ratio {RATIO}", max(differences))
    print(f"wrote {path}")

    excesses = [difference / (ATOL + RTOL * abs(theirs))
                for difference, theirs in zip(differences, torch_losses)]
    failures = [f"step {i + 1}: loss {coop_losses[i]} vs torch {torch_losses[i]}"
                for i, excess in enumerate(excesses) if excess > 1]
    if coop_accuracy != torch_accuracy:
        failures.append(f"test accuracies differ: coop {coop_accuracy}, torch "
                        f"{torch_accuracy}")
    for (name, param), twin_param in zip(model.named_parameters(), twin.parameters()):
        state, twin_state = optimizer.state[param], twin_optimizer.state[twin_param]
        for what, ours, theirs in [(name, param, twin_param)] + [
                (f"{name} {key}", torch.as_tensor(state[key]),
                 torch.as_tensor(value)) for key, value in twin_state.items()]:
            excess = ((ours - theirs).abs() / (ATOL + RTOL * theirs.abs())).max().item()
            if excess > 1:
                failures.append(f"'{what}' differs (max |diff| "
                                f"{(ours - theirs).abs().max().item():.3g})")
    if failures:
        print("coop and PyTorch disagree:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    if torch_accuracy[-1] < 0.8:  # chance is 0.1
        print(f"the model did not learn: test accuracy {torch_accuracy[-1]}",
              file=sys.stderr)
        return 1
    print(f"{len(coop_losses)} steps: every loss, the test accuracies, the trained "
          f"parameters and Adam's state agree within fp32 tolerance (largest loss "
          f"difference {max(differences):.2g}, {max(excesses):.2f} of the tolerance; "
          f"{time.monotonic() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
