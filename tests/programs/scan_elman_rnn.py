"""An Elman RNN for slot filling, in the style of the classic Theano tutorial: word
embeddings, a recurrence over the sentence with scan, a softmax per word, trained one
sentence at a time with SGD. Synthetic sentences: a word's label depends on the word and
the one before it, so the recurrence matters. ``main()`` returns the cost per epoch."""

import numpy

import graphc as theano
import graphc.tensor as T

VOCAB, LABELS = 30, 5


class RNNSLU:
    def __init__(self, nh, nc, ne, de, seed=0):
        rng = numpy.random.RandomState(seed)

        def init(*shape):
            return theano.shared(0.2 * rng.uniform(-1.0, 1.0, shape).astype(theano.config.floatX))

        self.emb = init(ne + 1, de)
        self.wx = init(de, nh)
        self.wh = init(nh, nh)
        self.w = init(nh, nc)
        self.bh = theano.shared(numpy.zeros(nh, dtype=theano.config.floatX))
        self.b = theano.shared(numpy.zeros(nc, dtype=theano.config.floatX))
        self.h0 = theano.shared(numpy.zeros(nh, dtype=theano.config.floatX))
        self.params = [self.emb, self.wx, self.wh, self.w, self.bh, self.b, self.h0]

        idxs = T.ivector()
        x = self.emb[idxs]
        y_sentence = T.ivector("y_sentence")

        def recurrence(x_t, h_tm1):
            h_t = T.nnet.sigmoid(T.dot(x_t, self.wx) + T.dot(h_tm1, self.wh) + self.bh)
            s_t = T.nnet.softmax(T.dot(h_t, self.w) + self.b)
            return [h_t, s_t]

        [h, s], _ = theano.scan(
            fn=recurrence, sequences=x, outputs_info=[self.h0, None], n_steps=x.shape[0]
        )
        p_y_given_x_sentence = s[:, 0, :]
        y_pred = T.argmax(p_y_given_x_sentence, axis=1)
        lr = T.scalar("lr")
        sentence_nll = -T.mean(T.log(p_y_given_x_sentence)[T.arange(x.shape[0]), y_sentence])
        sentence_gradients = T.grad(sentence_nll, self.params)
        sentence_updates = [(p, p - lr * g) for p, g in zip(self.params, sentence_gradients)]
        self.classify = theano.function(inputs=[idxs], outputs=y_pred)
        self.sentence_train = theano.function(
            inputs=[idxs, y_sentence, lr], outputs=sentence_nll, updates=sentence_updates
        )


def sentences(n, rng):
    out = []
    for _ in range(n):
        words = rng.randint(0, VOCAB, rng.randint(3, 9)).astype("int32")
        prev = numpy.concatenate([[0], words[:-1]])
        labels = ((words % LABELS) + (prev % 2)) % LABELS
        out.append((words, labels.astype("int32")))
    return out


def main(epochs=6):
    rng = numpy.random.RandomState(1)
    data = sentences(60, rng)
    rnn = RNNSLU(nh=24, nc=LABELS, ne=VOCAB, de=16)
    costs = []
    for _ in range(epochs):
        costs.append(float(numpy.mean([rnn.sentence_train(w, y, 0.3) for w, y in data])))
    pred = rnn.classify(data[0][0])
    assert pred.shape == data[0][1].shape
    return costs


if __name__ == "__main__":
    print(main())
